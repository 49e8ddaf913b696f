// Registers the `chaintrace` debug type: VS Code starts `chaintrace dap`, which speaks the
// Debug Adapter Protocol on stdin/stdout, with the launch configuration as its `launch`
// request's arguments.
const vscode = require("vscode");

function activate(context) {
  context.subscriptions.push(
    vscode.debug.registerDebugAdapterDescriptorFactory("chaintrace", {
      createDebugAdapterDescriptor(session) {
        const program = session.configuration.chaintracePath || "chaintrace";
        const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
        return new vscode.DebugAdapterExecutable(program, ["dap"], cwd ? { cwd } : undefined);
      },
    })
  );
}

function deactivate() {}

module.exports = { activate, deactivate };
