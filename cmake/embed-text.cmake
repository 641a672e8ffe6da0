# Turn a text file into a C string constant: -DIN= -DOUT= -DSYMBOL=
file(READ "${IN}" text)
string(REPLACE "\\" "\\\\" text "${text}")
string(REPLACE "\"" "\\\"" text "${text}")
string(REPLACE "\n" "\\n\"\n\"" text "${text}")
file(WRITE "${OUT}" "/* Generated from ${IN}; do not edit. */\nconst char ${SYMBOL}[] =\n\"${text}\";\n")
