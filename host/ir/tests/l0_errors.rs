//! Malformed L0 input: every case asserts the exact message, line and column of the first
//! diagnostic (and the hint where one is given). Nothing here may panic.

use ekb_ir::diag::Diagnostic;
use ekb_ir::l0::check::load;
use ekb_ir::SourceFile;

/// Loads `text`, expects failure, and returns the first diagnostic.
fn first_error(text: &str) -> Diagnostic {
    let src = SourceFile::new("t.ekir", text);
    match load(&src) {
        Ok(g) => panic!("expected an error, but the graph loaded: {g:?}"),
        Err(ds) => ds.into_iter().next().expect("at least one diagnostic"),
    }
}

/// Asserts the first diagnostic's message, line and column; returns it for further checks.
#[track_caller]
fn expect_error(text: &str, message: &str, line: usize, column: usize) -> Diagnostic {
    let d = first_error(text);
    assert_eq!(d.message, message, "\n{d}");
    let loc = d.location.as_ref().expect("located");
    assert_eq!((loc.line, loc.column), (line, column), "\n{d}");
    assert_eq!(loc.file, "t.ekir");
    d
}

/// A graph with inputs `x: f32[2,3]`, `k: i32[4]` and output `y: f32[2,3]`; `body` starts on
/// line 2.
fn graph(body: &str) -> String {
    format!("graph g(x: f32[2,3], k: i32[4]) -> (y: f32[2,3]) {{\n{body}\n}}\n")
}

// ---- truncated input ----

#[test]
fn truncated_body_names_the_open_graph() {
    let d = expect_error(
        "graph g(x: f32[2]) -> (y: f32[2]) {\n  %0 = relu(x)\n",
        "unexpected end of file: expected `}` to close graph `g` opened at line 1",
        3,
        1,
    );
    assert_eq!(d.expected.as_deref(), Some("`}`"));
}

#[test]
fn truncated_argument_list() {
    let d = expect_error(
        "graph g(x: f32[2]) -> (y: f32[2]) {\n  %0 = relu(x",
        "unexpected end of file: expected `)` or `,` after argument",
        2,
        14,
    );
    assert_eq!(
        d.notes,
        vec![
            "graph `g` opened at line 1 is not closed".to_string(),
            "the `(` of `relu` at line 2, column 12 is not closed".to_string()
        ]
    );
}

#[test]
fn unclosed_parenthesis_is_reported_at_the_end_of_its_line() {
    let d = expect_error(
        &graph(
            "  %0 = relu(x
  return %0",
        ),
        "expected `)` or `,` after argument, found end of line",
        2,
        14,
    );
    assert_eq!(d.notes, vec!["the `(` of `relu` at line 2, column 12 is not closed".to_string()]);
    // Arguments may still continue on the next line.
    let src = SourceFile::new(
        "t.ekir",
        graph(
            "  %0 = add(x,
    x
  )
  return %0",
        ),
    );
    assert!(load(&src).is_ok());
}

#[test]
fn truncated_signature() {
    expect_error("graph g(x: f32[2", "unexpected end of file: expected `,` or `]` after a dimension", 1, 17);
    expect_error(
        "graph g(x: f32[2])",
        "unexpected end of file: expected `->` and the graph's outputs",
        1,
        19,
    );
    expect_error("", "unexpected end of file: expected `graph` at the start of the file", 1, 1);
}

#[test]
fn missing_return() {
    expect_error(&graph("  %0 = relu(x)"), "graph `g` has no `return`", 3, 1);
}

// ---- syntax ----

#[test]
fn found_and_expected_are_both_named() {
    let d = expect_error(
        &graph("  %0 = relu(%1 = 3)\n  return %0"),
        "expected `)` or `,` after argument, found `=`",
        2,
        16,
    );
    assert_eq!(d.expected.as_deref(), Some("`)` or `,` after argument"));
    expect_error(&graph("  %0 relu(x)\n  return %0"), "expected `=` after `%0`, found `relu`", 2, 6);
    expect_error(
        &graph("  y = relu(x)\n  return y"),
        "expected a statement: `param name: type = init`, `%name = op(...)`, `fuse %a, %b` or `return values`, found `y`",
        2,
        3,
    );
    expect_error(
        &graph("  %0 = relu(x) %1\n  return %0"),
        "expected end of line or `;` after the statement, found `%1`",
        2,
        16,
    );
    expect_error(
        "graph g(x: f32[2]) -> (y: f32[2]) {\n  return x\n}\ngraph h() -> () {}\n",
        "expected end of file after the graph's closing `}` (one graph per file), found `graph`",
        4,
        1,
    );
}

#[test]
fn statements_may_be_separated_by_semicolons() {
    let src = SourceFile::new("t.ekir", "graph g(x: f32[2]) -> (y: f32[2]) { %0 = relu(x); return %0 }");
    let g = load(&src).unwrap();
    assert_eq!(g.nodes.len(), 1);
}

#[test]
fn inputs_come_before_attributes() {
    expect_error(
        &graph("  %0 = conv2d(x, stride=[1,1], k)\n  return %0"),
        "input `k` after the attribute `stride`",
        2,
        32,
    );
}

#[test]
fn return_is_last_and_params_come_first() {
    expect_error(&graph("  return x\n  %0 = relu(x)"), "statement after `return`, found `%0`", 3, 3);
    let d = expect_error(
        &graph("  %0 = relu(x)\n  param w: f32[3] = zeros\n  return %0"),
        "`param` after a node",
        3,
        3,
    );
    assert_eq!(d.expected.as_deref(), Some("every `param` before the first node"));
    expect_error(
        &graph("  param w: f32[3]\n  return x"),
        "expected `=` and an initialiser for parameter `w`, found end of line",
        2,
        18,
    );
}

#[test]
fn return_count_must_match_the_signature() {
    expect_error(
        &graph("  return x, x"),
        "`return` gives 2 values but the signature declares 1 output (y)",
        2,
        3,
    );
}

// ---- names ----

#[test]
fn unknown_operator_suggests_the_closest_name() {
    let d = expect_error(&graph("  %0 = conv2D(x, x)\n  return %0"), "unknown operator `conv2D`", 2, 8);
    assert_eq!(d.hint.as_deref(), Some("did you mean `conv2d`?"));
    assert_eq!(d.location.clone().unwrap().width, 6);
    let d = expect_error(&graph("  %0 = sofmax(x)\n  return %0"), "unknown operator `sofmax`", 2, 8);
    assert_eq!(d.hint.as_deref(), Some("did you mean `softmax`?"));
    let d = expect_error(&graph("  %0 = frobnicate(x)\n  return %0"), "unknown operator `frobnicate`", 2, 8);
    assert_eq!(d.hint, None);
}

#[test]
fn unknown_attribute_suggests_the_closest_name() {
    let d = expect_error(
        &graph("  %0 = conv2d(x, x, strides=[1,1])\n  return %0"),
        "`conv2d` has no attribute `strides`",
        2,
        21,
    );
    assert_eq!(d.hint.as_deref(), Some("did you mean `stride`?"));
    assert_eq!(d.expected.as_deref(), Some("one of `stride`, `pad`, `dilation`, `groups`"));
    let d = expect_error(
        &graph("  %0 = relu(x, alpha=0.1)\n  return %0"),
        "`relu` has no attribute `alpha`",
        2,
        16,
    );
    assert_eq!(d.notes, vec!["`relu` takes no attributes".to_string()]);
}

#[test]
fn unknown_values_and_use_before_definition() {
    let d = expect_error(&graph("  %0 = relu(xx)\n  return %0"), "unknown value `xx`", 2, 13);
    assert_eq!(d.hint.as_deref(), Some("did you mean `x`?"));
    expect_error(
        &graph("  %0 = relu(%1)\n  %1 = relu(x)\n  return %1"),
        "`%1` is used before its definition",
        2,
        13,
    );
    let d = expect_error(&graph("  %0 = relu(x)\n  return %7"), "unknown value `%7`", 3, 10);
    assert_eq!(d.hint, None, "numbered names get no hint");
}

#[test]
fn duplicate_names() {
    expect_error(&graph("  %0 = relu(x)\n  %0 = relu(x)\n  return %0"), "`%0` is defined twice", 3, 3);
    expect_error(&graph("  param x: f32[2,3] = zeros\n  return x"), "`x` is defined twice", 2, 9);
    expect_error(
        "graph g(x: f32[2]) -> (x: f32[2]) {\n  return x\n}\n",
        "output name `x` is already used",
        1,
        24,
    );
    expect_error(
        &graph("  %0 = relu(x, x=1)\n  return %0").replace("x=1", "alpha=1, alpha=2").replace("relu", "elu"),
        "attribute `alpha` is given twice",
        2,
        24,
    );
}

#[test]
fn unknown_dtype_and_initialiser() {
    let d =
        expect_error("graph g(x: f33[2]) -> (y: f32[2]) {\n  return x\n}\n", "unknown dtype `f33`", 1, 12);
    assert_eq!(d.hint.as_deref(), Some("did you mean `f32`?"));
    let d = expect_error(
        "graph g(x: f32[2] = unifrom(0, 1)) -> (y: f32[2]) {\n  return x\n}\n",
        "unknown initialiser `unifrom`",
        1,
        21,
    );
    assert_eq!(d.hint.as_deref(), Some("did you mean `uniform`?"));
}

// ---- arity ----

#[test]
fn wrong_arity_names_the_signature() {
    expect_error(&graph("  %0 = add(x)\n  return %0"), "`add` takes 2 inputs (a, b), found 1", 2, 8);
    expect_error(
        &graph("  %0 = conv2d(x)\n  return %0"),
        "`conv2d` takes 2 or 3 inputs (x, w[, b]), found 1",
        2,
        8,
    );
    expect_error(
        &graph("  %0 = full(x, shape=[2,3], value=1)\n  return %0"),
        "`full` takes no inputs, found 1",
        2,
        8,
    );
    expect_error(
        &graph("  %0 = concat(axis=0)\n  return %0"),
        "`concat` takes at least 1 input (xs...), found 0",
        2,
        8,
    );
    let d = expect_error(
        &graph("  %0 = max(x, x, axes=[0])\n  return %0"),
        "`max` takes 1 input (x), found 2",
        2,
        8,
    );
    assert!(d.notes[0].contains("`max(x, axes=[..])` is the reduction"), "{d}");
    expect_error(
        &graph("  %0 = sum(x)\n  return %0"),
        "`sum` requires the attribute `axes` (a list of integers such as `[1,1]`)",
        2,
        8,
    );
}

// ---- attribute kinds and ranges ----

#[test]
fn wrong_attribute_kind() {
    let d = expect_error(
        &graph("  %0 = conv2d(x, x, stride=2)\n  return %0"),
        "conv2d: `stride` must be a list of integers such as `[1,1]`, found integer `2`",
        2,
        28,
    );
    assert_eq!(d.hint.as_deref(), Some("write a list: `stride=[2,2]`"));
    let d = expect_error(
        &graph("  %0 = gelu(x, approximate=tanhh)\n  return %0"),
        "gelu: `approximate` must be one of `none`, `tanh`, found name `tanhh`",
        2,
        28,
    );
    assert_eq!(d.hint.as_deref(), Some("did you mean `tanh`?"));
    expect_error(
        &graph("  %0 = argmax(x, axis=1.5)\n  return %0"),
        "argmax: `axis` must be an integer, found number `1.5`",
        2,
        23,
    );
    expect_error(
        &graph("  %0 = cast(x, dtype=f64)\n  return %0"),
        "cast: `dtype` must be a dtype (`f32`, `i32`, `i8` or `f16`), found name `f64`",
        2,
        22,
    );
}

#[test]
fn out_of_range_attributes_name_the_attribute() {
    let cases: &[(&str, &str, usize)] = &[
        ("conv2d(x, x, stride=[0,1])", "conv2d: `stride` entries must be >= 1, found 0", 28),
        ("conv2d(x, x, groups=0)", "conv2d: `groups` must be >= 1, found 0", 28),
        ("conv2d(x, x, pad=[0,-1,0,0])", "conv2d: `pad` entries must be >= 0, found -1", 25),
        ("conv2d(x, x, dilation=[1])", "conv2d: `dilation` must have 2 entries, found 1", 30),
        ("max_pool2d(x, kernel=[0,2])", "max_pool2d: `kernel` entries must be >= 1, found 0", 29),
        (
            "slice(x, axes=[0], starts=[0], ends=[1], steps=[0])",
            "slice: `steps` entries must be >= 1, found 0",
            55,
        ),
        (
            "slice(x, axes=[0,1], starts=[0], ends=[1,1])",
            "slice: `starts` has 1 entries but `axes` has 2",
            36,
        ),
        (
            "transpose(x, perm=[1,1])",
            "transpose: `perm` must be a permutation, but 1 appears twice (again at position 1)",
            26,
        ),
        ("reshape(x, shape=[-1,-1])", "reshape: `shape` may contain at most one -1", 25),
        ("reshape(x, shape=[0,6])", "reshape: `shape` entries must be >= 1, found 0", 25),
        ("clip(x, min=1, max=0)", "clip: `max` must be >= `min`, found min=1.0 > max=0.0", 27),
        ("softplus(x, beta=0)", "softplus: `beta` must be > 0, found 0.0", 25),
        ("leaky_relu(x, alpha=inf)", "leaky_relu: `alpha` must be finite, found `inf`", 28),
        ("layer_norm(x, x, x, eps=nan)", "layer_norm: `eps` must be a number, found `nan`", 32),
        ("sum(x, axes=[])", "sum: `axes` must list at least one axis", 20),
        ("pad(x, pads=[0,0,0,0], mode=edge, value=1)", "pad: `value` applies only to `mode=constant`", 48),
    ];
    for &(node, message, column) in cases {
        expect_error(&graph(&format!("  %0 = {node}\n  return %0")), message, 2, column);
    }
}

// ---- types and shapes ----

#[test]
fn shape_mismatches() {
    let conv = "graph g(x: f32[1,3,8,8]) -> (y: f32[1,8,6,6]) {\n  param w: f32[8,4,3,3] = kaiming_uniform\n  %0 = conv2d(x, w)\n  return %0\n}\n";
    expect_error(conv, "conv2d: input has 3 channels but weight expects 4 (= w.shape[1] * groups)", 3, 8);
    expect_error(
        &graph("  param b: f32[4] = zeros\n  %0 = add(x, b)\n  return %0"),
        "add: shapes [2,3] and [4] cannot be broadcast: dimension 1 from the end is 3 vs 4",
        3,
        8,
    );
    expect_error(
        &graph("  %0 = matmul(x, x)\n  return %0"),
        "matmul: inner dimensions differ: a is [..,2,3] and b is [..,2,3] (after transposes)",
        2,
        8,
    );
    expect_error(
        &graph("  %0 = sum(x, axes=[2])\n  return %0"),
        "sum: axis 2 is out of range for rank 2",
        2,
        8,
    );
    expect_error(
        &graph("  %0 = sum(x, axes=[1,-1])\n  return %0"),
        "sum: axis -1 is listed twice in `axes` (it is axis 1)",
        2,
        8,
    );
    expect_error(
        &graph("  %0 = reshape(x, shape=[4,-1])\n  return %0"),
        "reshape: cannot reshape [2,3] (6 elements) to [4,-1]",
        2,
        8,
    );
    expect_error(
        &graph("  %0 = pad(x, pads=[0,3,0,3], mode=reflect)\n  return %0"),
        "pad: reflect padding of axis 1 (3 before, 3 after) must be less than its size 3",
        2,
        8,
    );
    expect_error(
        "graph g(x: f32[1,1,4,4]) -> (y: f32[1,1,2,2]) {\n  %0 = max_pool2d(x, kernel=[2,2], pad=[2,0,0,0])\n  return %0\n}\n",
        "max_pool2d: pad top 2 is more than half the kernel height 2",
        2,
        8,
    );
}

#[test]
fn dtype_rules() {
    expect_error(
        "graph g(k: i32[4]) -> (y: i32[4]) {\n  %0 = exp(k)\n  return %0\n}\n",
        "exp: input `x` has dtype i32, expected f32",
        2,
        8,
    );
    expect_error(
        &graph("  %0 = add(x, k)\n  return %0"),
        "add: inputs have different dtypes (f32 and i32); insert a `cast`",
        2,
        8,
    );
    expect_error(
        "graph g(k: i32[4]) -> (y: i32[4]) {\n  %0 = clip(k, min=0.5)\n  return %0\n}\n",
        "clip: `min` = 0.5 is not an integer, but the input is i32",
        2,
        8,
    );
}

#[test]
fn annotations_and_outputs_must_match_inferred_types() {
    let d = expect_error(
        &graph("  %0: f32[3,2] = relu(x)\n  return %0"),
        "`%0` is annotated f32[3,2] but `relu` produces f32[2,3]",
        2,
        3,
    );
    assert_eq!(d.expected.as_deref(), Some("`%0: f32[2,3]` or no annotation"));
    expect_error(
        &graph("  %0 = sum(x, axes=[0])\n  return %0"),
        "output `y` is declared f32[2,3] but `%0` is f32[3]",
        3,
        10,
    );
}

#[test]
fn initialisers_must_suit_the_dtype() {
    expect_error(
        "graph g(x: f32[2] = randint(0, 4)) -> (y: f32[2]) {\n  return x\n}\n",
        "input `x`: `randint` initialises only integer (i32, i8) tensors",
        1,
        9,
    );
    expect_error(
        "graph g(k: i32[2] = uniform(0, 4)) -> (y: i32[2]) {\n  return k\n}\n",
        "input `k`: `uniform(0.0, 4.0)` initialises only float (f32, f16) tensors",
        1,
        9,
    );
    expect_error(
        "graph g(x: f32[2] = uniform(1, 1)) -> (y: f32[2]) {\n  return x\n}\n",
        "input `x`: `uniform(1.0, 1.0)` needs finite lo < hi",
        1,
        9,
    );
    expect_error(
        "graph g(q: i8[2] = randint(0, 129)) -> (y: i8[2]) {\n  return q\n}\n",
        "input `q`: `randint(0, 129)` needs lo < hi with -128 <= lo and hi <= 128 for i8",
        1,
        9,
    );
    expect_error(
        "graph g(q: i8[2] = uniform(0, 1)) -> (y: i8[2]) {\n  return q\n}\n",
        "input `q`: `uniform(0.0, 1.0)` initialises only float (f32, f16) tensors",
        1,
        9,
    );
    expect_error(
        "graph g(k: i32[2] = randint(5, 2)) -> (y: i32[2]) {\n  return k\n}\n",
        "input `k`: `randint(5, 2)` needs lo < hi, both within i32",
        1,
        9,
    );
}

#[test]
fn oversized_tensors_are_rejected() {
    expect_error(
        "graph g(x: f32[100000,100000]) -> (y: f32[2]) {\n  return x\n}\n",
        "input `x: f32[100000,100000]` has more than 2147483647 elements (the limit)",
        1,
        9,
    );
    expect_error(
        "graph g(x: f32[2]) -> (y: f32[65536,65536]) {\n  %0 = full(shape=[65536,65536], value=0)\n  return %0\n}\n",
        "output `y: f32[65536,65536]` has more than 2147483647 elements (the limit)",
        1,
        24,
    );
}

// ---- bytes and characters ----

#[test]
fn non_utf8_bytes_are_a_located_diagnostic() {
    let d = SourceFile::from_bytes(
        "t.ekir".into(),
        b"graph g(x: f32[2]) -> (y: f32[2]) {\n  %0 = re\xfflu(x)\n".to_vec(),
    )
    .unwrap_err();
    assert_eq!(d.message, "the file is not valid UTF-8: byte 0xff at offset 45");
    let loc = d.location.clone().unwrap();
    assert_eq!((loc.line, loc.column), (2, 10));
}

#[test]
fn bad_characters_and_numbers() {
    expect_error(&graph("  %0 = relu(x) $\n  return %0"), "unexpected character `$`", 2, 16);
    expect_error(
        &graph("  %0 = sum(x, axes=[99999999999999999999])\n  return %0"),
        "integer `99999999999999999999` is out of range",
        2,
        21,
    );
}

// ---- names the loop program cannot carry ----

#[test]
fn an_interface_name_that_is_an_l1_keyword_is_refused_with_a_rename_hint() {
    let d = expect_error(
        "graph g(out: f32[2]) -> (y: f32[2]) {\n  %0 = relu(out)\n  return %0\n}\n",
        "`out` is a keyword of the loop language (L1)",
        1,
        9,
    );
    assert_eq!(d.hint.as_deref(), Some("rename it, e.g. `out_`"));
    let d = expect_error(
        "graph g(x: f32[2]) -> (kernel: f32[2]) {\n  %0 = relu(x)\n  return %0\n}\n",
        "`kernel` is a keyword of the loop language (L1)",
        1,
        24,
    );
    assert!(d.notes.iter().any(|n| n.contains("buffers of the lowered loop program")), "{d}");
}

// ---- fusion groups ----

#[test]
fn a_fusion_group_parses_prints_and_round_trips() {
    let text = graph("  %0 = relu(x)\n  %1 = add(%0, x)\n  fuse %0, %1\n  return %1");
    let g = load(&SourceFile::new("t.ekir", &text)).expect("loads");
    assert_eq!(g.groups.len(), 1);
    let printed = ekb_ir::l0::print::print(&g);
    assert!(printed.contains("\n  fuse %0, %1\n  return %1\n"), "{printed}");
    let again = load(&SourceFile::new("t.ekir", &printed)).expect("reloads");
    assert_eq!(ekb_ir::l0::print::print(&again), printed);
}

#[test]
fn a_node_after_fuse_is_refused() {
    expect_error(
        &graph("  %0 = relu(x)\n  fuse %0, %0\n  %1 = relu(%0)\n  return %1"),
        "a node after `fuse`",
        4,
        3,
    );
}

#[test]
fn fusion_group_membership_errors() {
    let d =
        expect_error(&graph("  %0 = relu(x)\n  fuse %0\n  return %0"), "a fusion group of one node", 3, 3);
    assert_eq!(d.expected.as_deref(), Some("two or more nodes, such as `fuse %0, %1`"));
    expect_error(
        &graph("  %0 = relu(x)\n  %1 = relu(%0)\n  fuse x, %1\n  return %1"),
        "`x` cannot be fused: it is an input or parameter",
        4,
        8,
    );
    expect_error(
        &graph("  %0 = relu(x)\n  %1 = relu(%0)\n  fuse %1, %0\n  return %1"),
        "`%0` is listed after `%1`, which comes later in the graph",
        4,
        12,
    );
    expect_error(
        &graph("  %0 = relu(x)\n  %1 = relu(%0)\n  %2 = relu(%1)\n  fuse %0, %1\n  fuse %1, %2\n  return %2"),
        "`%1` is in two fusion groups",
        6,
        8,
    );
    let d = expect_error(
        &graph("  %0 = sum(x, axes=[1], keepdims=true)\n  %1 = softmax(%0, axis=1)\n  %2 = add(%1, x)\n  fuse %0, %1, %2\n  return %2"),
        "a fusion group holds 2 operators that are not elementwise (%0, %1)",
        5,
        3,
    );
    assert!(d.hint.as_deref().is_some_and(|h| h.contains("split the group")), "{d}");
}

#[test]
fn fusion_group_use_errors() {
    expect_error(
        &graph("  %0 = relu(x)\n  %1 = neg(%0)\n  %2 = add(%0, %1)\n  fuse %0, %1\n  return %2"),
        "`%0` is fused but `%2`, outside the group, reads it",
        5,
        8,
    );
    expect_error(
        &graph("  %0 = relu(x)\n  %1 = neg(%0)\n  fuse %0, %1\n  return %0"),
        "`%0` is fused but returned",
        4,
        8,
    );
    // An epilogue member reading the anchor's value broadcast to another shape.
    let text = "graph g(x: f32[2,3]) -> (y: f32[2,3]) {\n  %0 = sum(x, axes=[1], keepdims=true)\n  %1 = add(%0, x)\n  fuse %0, %1\n  return %1\n}\n";
    expect_error(text, "`%1` reads `%0: f32[2,1]` of its group broadcast to [2, 3]", 3, 12);
    // An epilogue operand computed after the anchor.
    let text = "graph g(x: f32[2,3]) -> (y: f32[2]) {\n  %0 = sum(x, axes=[1])\n  %1 = neg(x)\n  %2 = sum(%1, axes=[1])\n  %3 = add(%0, %2)\n  fuse %0, %3\n  return %3\n}\n";
    let d = expect_error(text, "`%3` reads `%2`, which is computed after the group's anchor `%0`", 5, 16);
    assert_eq!(d.hint.as_deref(), Some("move `%2` before `%0`"));
}

#[test]
fn batch_norm_is_an_elementwise_member_of_a_fusion_group() {
    // After a convolution (the anchor), before it as a prologue, or first in a chain.
    let text = "graph g(x: f32[1,4,6,6]) -> (y: f32[1,4,6,6], z: f32[1,4,6,6]) {
  param w: f32[4,4,3,3] = kaiming_uniform
  param s: f32[4] = ones
  param b: f32[4] = zeros
  %0 = conv2d(x, w, pad=[1,1,1,1])
  %1 = batch_norm(%0, s, b, b, s)
  %2 = relu(%1)
  %3 = batch_norm(x, s, b, b, s)
  %4 = relu(%3)
  fuse %0, %1, %2
  fuse %3, %4
  return %2, %4
}
";
    let g = load(&SourceFile::new("t.ekir", text)).expect("both groups are legal");
    let anchors: Vec<&str> = g.groups.iter().map(|f| f.nodes[f.anchor(&g)].name.as_str()).collect();
    assert_eq!(anchors, ["%0", "%4"]);
    // It does not count as a second anchor next to a convolution.
    let two = text.replace("  %4 = relu(%3)", "  %4 = softmax(%3, axis=1)");
    let two = two.replace("fuse %0, %1, %2\n  fuse %3, %4", "fuse %0, %1, %2, %3, %4");
    let two = two.replace("return %2, %4", "return %4, %4");
    expect_error(&two, "a fusion group holds 2 operators that are not elementwise (%0, %4)", 10, 3);
}
