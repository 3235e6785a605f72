// The test driver: an extension, loaded beside the one under test, that runs the suite once the
// window has started. VS Code refuses every modal dialog in a window opened with extensionTestsPath
// (its DialogService skips dialogs "in tests"), so the suite runs from here instead, in an ordinary
// development window where dialogs appear and the runner can click them as a person would.
// The suite (AGENT_SANDBOX_VSCODE_SUITE) writes its counts itself; this writes the exit code.
const fs = require('node:fs');

exports.activate = function activate() {
  const suite = process.env.AGENT_SANDBOX_VSCODE_SUITE;
  const exitFile = process.env.AGENT_SANDBOX_VSCODE_EXIT;
  if (!suite || !exitFile) return;
  setTimeout(async () => {
    let code = 0;
    try {
      await require(suite).run();
    } catch (error) {
      code = 1;
      fs.appendFileSync(`${exitFile}.log`, `${error && error.stack ? error.stack : error}\n`);
    }
    fs.writeFileSync(exitFile, String(code));
  }, 0);
};

exports.deactivate = function deactivate() {};
