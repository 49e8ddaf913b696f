//! The VS Code extension (`editors/vscode/`) packaged by Microsoft's own packager, vsce 4.1.0
//! from npm (scripts/install-test-tools.sh): the package holds the extension's files and a
//! manifest registering the `chaintrace` debug type, and the packaged `extension.js`, loaded by
//! node against a stand-in for VS Code's `vscode` module, starts `chaintrace dap`, which
//! answers the Debug Adapter Protocol's `initialize`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::dap_client::Client;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn node_modules() -> PathBuf {
    root().join(".tools/js/node_modules")
}

/// Runs node with `script`; its stdout as JSON.
fn node(script: &str, dir: &Path) -> Value {
    let out = Command::new("node")
        .args(["-e", script])
        .current_dir(dir)
        .output()
        .expect("node (installed with the test tools)");
    assert!(
        out.status.success(),
        "node failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

#[test]
fn vsce_packages_the_extension_and_it_starts_the_adapter() {
    let vsce = node_modules().join(".bin/vsce");
    assert!(
        vsce.exists(),
        "{vsce:?} missing: run scripts/install-test-tools.sh"
    );
    let tmp = std::env::temp_dir().join(format!("chaintrace-vsce-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let src = tmp.join("src");
    copy_dir(&root().join("editors/vscode"), &src);
    let vsix = tmp.join("chaintrace-debug.vsix");
    let out = Command::new(&vsce)
        .args(["package", "--allow-missing-repository", "--out"])
        .arg(&vsix)
        .current_dir(&src)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "vsce package failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );

    // The package read back with yauzl (vsce's own zip reader).
    let read = format!(
        r#"const yauzl = require({yauzl:?});
const out = {{entries: [], files: {{}}}};
yauzl.open({vsix:?}, {{lazyEntries: true}}, (err, z) => {{
  if (err) throw err;
  z.readEntry();
  z.on("entry", (e) => {{
    out.entries.push(e.fileName);
    z.openReadStream(e, (err, s) => {{
      if (err) throw err;
      const parts = [];
      s.on("data", (d) => parts.push(d));
      s.on("end", () => {{ out.files[e.fileName] = Buffer.concat(parts).toString(); z.readEntry(); }});
    }});
  }});
  z.on("end", () => console.log(JSON.stringify(out)));
}});"#,
        yauzl = node_modules().join("yauzl").display().to_string(),
        vsix = vsix.display().to_string(),
    );
    let package = node(&read, &tmp);
    let mut entries: Vec<&str> = package["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    entries.sort();
    assert_eq!(
        entries,
        [
            "[Content_Types].xml",
            "extension.vsixmanifest",
            "extension/LICENSE.txt",
            "extension/extension.js",
            "extension/launch.example.json",
            "extension/package.json",
            "extension/readme.md",
        ]
    );
    let files = &package["files"];
    let manifest: Value =
        serde_json::from_str(files["extension/package.json"].as_str().unwrap()).unwrap();
    assert_eq!(
        manifest["contributes"]["debuggers"][0]["type"],
        "chaintrace"
    );
    assert_eq!(manifest["main"], "./extension.js");
    let shipped = files["extension/extension.js"].as_str().unwrap();
    let ours = std::fs::read_to_string(root().join("editors/vscode/extension.js")).unwrap();
    assert_eq!(shipped, ours);
    let vsixmanifest = files["extension.vsixmanifest"].as_str().unwrap();
    assert!(
        vsixmanifest.contains(r#"Id="chaintrace-debug""#),
        "{vsixmanifest}"
    );

    // The shipped extension.js against a stand-in `vscode` module: activated, it registers a
    // factory for `chaintrace` that starts `<chaintracePath> dap`.
    let run = tmp.join("run");
    std::fs::create_dir_all(run.join("node_modules/vscode")).unwrap();
    std::fs::write(run.join("extension.js"), shipped).unwrap();
    std::fs::write(
        run.join("node_modules/vscode/index.js"),
        r#"const factories = {};
class DebugAdapterExecutable { constructor(command, args, options) { Object.assign(this, {command, args, options}); } }
module.exports = {
  factories,
  DebugAdapterExecutable,
  debug: { registerDebugAdapterDescriptorFactory(type, f) { factories[type] = f; return { dispose() {} }; } },
  workspace: { workspaceFolders: undefined },
};"#,
    )
    .unwrap();
    let activate = format!(
        r#"const vscode = require("vscode");
const ext = require("./extension.js");
const context = {{subscriptions: []}};
ext.activate(context);
const d = vscode.factories["chaintrace"].createDebugAdapterDescriptor(
  {{configuration: {{chaintracePath: {bin:?}}}}});
console.log(JSON.stringify({{registered: Object.keys(vscode.factories), subscriptions: context.subscriptions.length,
  command: d.command, args: d.args}}));"#,
        bin = env!("CARGO_BIN_EXE_chaintrace"),
    );
    let started = node(&activate, &run);
    assert_eq!(
        started,
        json!({"registered": ["chaintrace"], "subscriptions": 1,
            "command": env!("CARGO_BIN_EXE_chaintrace"), "args": ["dap"]})
    );

    // That command speaks the protocol.
    let mut cmd = Command::new(started["command"].as_str().unwrap());
    cmd.arg("dap");
    let mut c = Client::spawn(cmd);
    let reply = c.request("initialize", json!({"adapterID": "chaintrace"}));
    assert_eq!(reply["success"], true, "{reply}");
    assert_eq!(reply["body"]["supportsStepBack"], true, "{reply}");
    drop(c.input);
    assert!(c.child.wait().unwrap().success());
    let _ = std::fs::remove_dir_all(&tmp);
}
