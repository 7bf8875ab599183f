# engine/io/embed_page.cmake: cmake -DIN=page.html -DOUT=page.c -P embed_page.cmake
# Writes the page of `datm report` as two C strings, datm_report_page_head (up to the line
# "<!-- DATM-DATA -->") and datm_report_page_tail (after it), as byte arrays so that no
# character of the page needs escaping.
file(READ "${IN}" page)
set(marker "<!-- DATM-DATA -->\n")
string(FIND "${page}" "${marker}" at)
if(at LESS 0)
  message(FATAL_ERROR "${IN}: no line <!-- DATM-DATA -->")
endif()
string(LENGTH "${marker}" mlen)
math(EXPR tail_at "${at} + ${mlen}")
string(SUBSTRING "${page}" 0 ${at} head)
string(SUBSTRING "${page}" ${tail_at} -1 tail)
set(out "/* generated from engine/io/report_page.html by engine/io/embed_page.cmake */\n")
foreach(part head tail)
  string(HEX "${${part}}" hex)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," hex "${hex}")
  string(REGEX REPLACE "((0x..,){24})" "\\1\n" hex "${hex}")
  string(APPEND out "const char datm_report_page_${part}[] = {\n${hex}0x00};\n")
endforeach()
file(WRITE "${OUT}.tmp" "${out}")
file(RENAME "${OUT}.tmp" "${OUT}")
