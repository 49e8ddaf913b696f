//! Source maps, function spans and the internal stack, on small hand-made inputs.

use super::ast::AstDecls;
use super::*;

#[test]
fn decodes_compressed_maps() {
    let m = decode_source_map("1:2:0:-:0;;3:4;:9:1:i;:::o");
    let e = |start, len, file, jump| SrcEntry {
        start,
        len,
        file,
        jump,
    };
    assert_eq!(
        m,
        vec![
            e(1, 2, 0, b'-'),
            e(1, 2, 0, b'-'),
            e(3, 4, 0, b'-'),
            e(3, 9, 1, b'i'),
            e(3, 9, 1, b'o'),
        ]
    );
    assert!(decode_source_map("").is_empty());
}

#[test]
fn push_data_belongs_to_its_push() {
    // PUSH1 0x80, PUSH2 0x0102, JUMP, PUSH32 …, STOP
    let mut code = vec![0x60, 0x80, 0x61, 0x01, 0x02, 0x56, 0x7f];
    code.extend([0u8; 32]);
    code.push(0x00);
    let ix = instruction_index(&code);
    assert_eq!(&ix[..7], &[0, 0, 1, 1, 1, 2, 3]);
    assert_eq!(ix[38], 3);
    assert_eq!(ix[39], 4);
}

const SRC: &str = "// c { }\ncontract A {\n    modifier m() { _; }\n    function f(uint x) external {\n        string memory s = \"}{\";\n        g(x);\n    }\n    function g(uint) internal {}\n    function h() external;\n}\nlibrary L { function k() internal { } }\n";

#[test]
fn scans_functions_of_source_text() {
    let f = scan_functions(SRC);
    let names: Vec<(&str, &str)> = f
        .iter()
        .map(|s| (s.contract.as_str(), s.name.as_str()))
        .collect();
    assert_eq!(names, vec![("A", "m"), ("A", "f"), ("A", "g"), ("L", "k")]);
    let fstart = SRC.find("function f").unwrap();
    assert_eq!(f[1].start, fstart);
    assert_eq!(&SRC[f[1].end - 1..f[1].end], "}");
}

#[test]
fn locates_lines_and_columns() {
    let file = SourceFile::new("A.sol".into(), TextOrigin::Inline(SRC.into()), None);
    let at = SRC.find("g(x);").unwrap();
    let l = file.locate(at, 4).unwrap();
    assert_eq!((l.line, l.column), (6, 9));
    assert_eq!(l.text, "        g(x);");
    assert_eq!(l.span, (8, 12));
    assert_eq!(file.function_at(at).unwrap().name, "f");
    // A span running past its line is cut at the line's end.
    let f = SRC.find("function f").unwrap();
    let l = file.locate(f, 60).unwrap();
    assert_eq!(l.span, (4, l.text.len()));
}

#[test]
fn rebuilds_the_internal_stack_from_jump_markers() {
    // pc 0: JUMP (in), 1: JUMP (in), 2: JUMP (out), 3: REVERT
    let code = [0x56, 0x56, 0x56, 0xfd];
    let unit = Arc::new(Unit::default());
    let map = CodeMap::new("A", &code, "0:1:0:i;1:1:0:i;2:1:0:o;3:1:0:-", unit);
    // Each level also names the JUMP (its index) that entered it: where its arguments are.
    let l = |entered, pc, jump| Level { entered, pc, jump };
    assert_eq!(
        map.levels(&[(0, 10), (1, 20), (2, 1)], 3),
        vec![l(None, 0, None), l(Some(10), 3, Some(0))]
    );
    assert_eq!(
        map.levels(&[(0, 10), (1, 20)], 3),
        vec![
            l(None, 0, None),
            l(Some(10), 1, Some(0)),
            l(Some(20), 3, Some(1))
        ]
    );
    assert_eq!(map.levels(&[(2, 1)], 3), vec![l(None, 3, None)]);
}

#[test]
fn reads_function_spans_from_an_ast() {
    let ast = serde_json::json!({"nodeType": "SourceUnit", "src": "0:100:0", "nodes": [
        {"nodeType": "ContractDefinition", "name": "C", "src": "0:100:0", "nodes": [
            {"nodeType": "FunctionDefinition", "name": "", "kind": "constructor", "src": "10:20:0"},
            {"nodeType": "ModifierDefinition", "name": "only", "src": "40:10:0"},
            {"nodeType": "FunctionDefinition", "name": "f", "kind": "function", "src": "60:30:0"}
        ]}
    ]});
    let out = AstDecls::from_value(&ast).unwrap().functions;
    let names: Vec<(&str, &str, usize)> = out
        .iter()
        .map(|f| (f.contract.as_str(), f.name.as_str(), f.start))
        .collect();
    assert_eq!(
        names,
        vec![("C", "constructor", 10), ("C", "only", 40), ("C", "f", 60)]
    );
}

#[test]
fn scans_parameters_of_source_text() {
    let text = "contract C {\n    function f(uint256 x, address payable to, bytes calldata data, \
                S memory s, mapping(uint => uint) storage m, uint[] memory) external {}\n}\n";
    let f = &scan_functions(text)[0];
    assert_eq!(
        f.inputs,
        vec![
            ("x".to_string(), "uint256".to_string()),
            ("to".to_string(), "address payable".to_string()),
            ("data".to_string(), "bytes calldata".to_string()),
            ("s".to_string(), "S memory".to_string()),
            (
                "m".to_string(),
                "mapping(uint => uint) storage ref".to_string()
            ),
            (String::new(), "uint[] memory".to_string()),
        ]
    );
    // `S` is a struct the text cannot type: no selector types.
    assert_eq!(f.params, None);
    let g = &scan_functions("contract D { function g(uint a, bool b) public {} }")[0];
    assert_eq!(g.params.as_deref(), Some("uint256,bool"));
}
