// What a host written in JavaScript does to a model's arguments, for
// harness.py: reads JSON texts, one per line, and writes each back, one per
// line, as JSON.stringify(JSON.parse(text)) (numbers become doubles on the
// way). A text JSON.parse refuses is answered by `!` and the error.
"use strict";

const readline = require("readline");

const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on("line", (line) => {
  let out;
  try {
    out = JSON.stringify(JSON.parse(line));
  } catch (e) {
    out = "!" + String(e && e.message ? e.message : e).replace(/\n/g, " ");
  }
  process.stdout.write(out + "\n");
});
