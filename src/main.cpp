#include "cli/app.h"

int main(int argc, char** argv) { return kopt::cli::run(argc, argv); }
