"""The two kinds of failure the harness reports. Both exit 4 (input, contract or configuration error)."""


class UsageError(Exception):
    """Bad usage or a ref.py that breaks the contract: the message names what to fix."""


class DimsError(UsageError):
    """The dimensions given on kopt's command line do not fit the kernel (not ref.py's fault). The CLI prints it as
    "kopt_harness: dimension error: ...", which kopt reports as such."""


class RefError(Exception):
    """Code in ref.py (or a Triton kernel.py: `file`) raised. `where` names the function ("setup",
    "reference", ...); the original exception is the __cause__, whose traceback the CLI prints."""

    def __init__(self, where, cause, file="ref.py"):
        super().__init__(f"{where} raised {type(cause).__name__}: {cause}")
        self.where = where
        self.cause = cause
        self.file = file
