// Adds up vitest JSON reports and prints the closing line CI reads: "N passed, N failed".
// A skipped or not-yet-written test, or a report with no tests, fails CI: every test runs.
import { existsSync, readFileSync } from "node:fs";

let passed = 0;
let failed = 0;
const problems = [];
for (const file of process.argv.slice(2)) {
  if (!existsSync(file)) {
    problems.push(`${file}: no report (the run crashed before reporting)`);
    failed += 1;
    continue;
  }
  const report = JSON.parse(readFileSync(file, "utf8"));
  passed += report.numPassedTests;
  failed += report.numFailedTests;
  // vitest names the count of unwritten tests after its `it.todo`, hence the field name below.
  const notRun = report.numPendingTests + report.numTodoTests;
  if (notRun > 0) {
    problems.push(`${file}: ${notRun} test(s) skipped or left unwritten`);
    failed += notRun;
  }
  if (report.numTotalTests === 0) {
    problems.push(`${file}: no tests ran`);
    failed += 1;
  }
  const brokenSuites = report.testResults.filter(
    (suite) => suite.status === "failed" && suite.assertionResults.length === 0,
  );
  for (const suite of brokenSuites) {
    problems.push(`${suite.name}: failed to load: ${suite.message}`);
    failed += 1;
  }
}
for (const problem of problems) console.log(`CI: ${problem}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
