# The one way kopt embeds a file in its binary: kopt_embed_bytes(NAME PATH) appends to `arrays` (in the caller's
# scope) the definition of `const unsigned char k_NAME[N + 1]`, the file's N bytes and a NUL, and sets NAME_size to N.
# Included by the generator scripts run at build time (embed_report_assets.cmake, embed_ceilings_probe.cmake).
function(kopt_embed_bytes name path)
  file(READ "${path}" hex HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  string(LENGTH "${hex}" nhex)
  math(EXPR n "${nhex} / 2")
  set(arrays "${arrays}const unsigned char k_${name}[${n} + 1] = {${bytes}0x00};\n" PARENT_SCOPE)
  set(${name}_size ${n} PARENT_SCOPE)
endfunction()
