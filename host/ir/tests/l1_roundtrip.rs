//! L1 text round trip: every golden module under `tests/golden/l1/` is canonical (printing what
//! was parsed gives the file back, byte for byte), every `*.in.ekl1` prints as its `*.out.ekl1`,
//! and printing then parsing reproduces the tree (up to spans). `EKB_BLESS=1` rewrites the
//! `*.out.ekl1` files after a deliberate change of the canonical form.

use ekb_ir::l1::parse::parse;
use ekb_ir::l1::print::{print, print_expr};
use ekb_ir::l1::*;
use ekb_ir::{SourceFile, Span};
use std::path::{Path, PathBuf};

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/l1")
}

fn parse_file(path: &Path) -> Module {
    let src = SourceFile::read(path).unwrap();
    parse(&src).unwrap_or_else(|d| panic!("{d}"))
}

/// Spans differ between a text and its reprint; compare trees without them.
fn strip(m: &Module) -> Module {
    let text = print(m);
    let mut m = parse(&SourceFile::new("reprint", text)).unwrap();
    clear_spans(&mut m);
    m
}

fn clear_spans(m: &mut Module) {
    m.span = Span::NONE;
    m.buffers.iter_mut().for_each(|b| b.span = Span::NONE);
    for r in &mut m.plan {
        r.span = Span::NONE;
        r.args.iter_mut().for_each(|a| a.span = Span::NONE);
    }
    for k in &mut m.kernels {
        k.span = Span::NONE;
        k.params.iter_mut().for_each(|p| p.span = Span::NONE);
        k.body.iter_mut().for_each(clear_stmt);
    }
}

fn clear_stmt(s: &mut Stmt) {
    match s {
        Stmt::Loop { lo, hi, body, span, .. } => {
            *span = Span::NONE;
            clear_expr(lo);
            clear_expr(hi);
            body.iter_mut().for_each(clear_stmt);
        }
        Stmt::If { cond, then_body, else_body, span } => {
            *span = Span::NONE;
            clear_expr(cond);
            then_body.iter_mut().chain(else_body.iter_mut()).for_each(clear_stmt);
        }
        Stmt::Let { value, span, .. } => {
            *span = Span::NONE;
            clear_expr(value);
        }
        Stmt::Store { buf, index, value, span } => {
            *span = Span::NONE;
            buf.span = Span::NONE;
            index.iter_mut().for_each(clear_expr);
            clear_expr(value);
        }
        Stmt::Alloc { span, .. } | Stmt::Barrier { span } => *span = Span::NONE,
        Stmt::Launch { grid, block, body, span, .. } => {
            *span = Span::NONE;
            grid.iter_mut().chain(block.iter_mut()).for_each(|d| d.span = Span::NONE);
            body.iter_mut().for_each(clear_stmt);
        }
    }
}

fn clear_expr(e: &mut Expr) {
    e.span = Span::NONE;
    match &mut e.kind {
        ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_) | ExprKind::Var(_) => {}
        ExprKind::Load { buf, index } => {
            buf.span = Span::NONE;
            index.iter_mut().for_each(clear_expr);
        }
        ExprKind::Unary { arg, .. } | ExprKind::Cast { arg, .. } => clear_expr(arg),
        ExprKind::Binary { lhs, rhs, .. } => {
            clear_expr(lhs);
            clear_expr(rhs);
        }
        ExprKind::Select { cond, then_val, else_val } => {
            clear_expr(cond);
            clear_expr(then_val);
            clear_expr(else_val);
        }
        ExprKind::Call { args, .. } => args.iter_mut().for_each(clear_expr),
    }
}

#[test]
fn golden_modules_are_canonical() {
    let mut seen = 0;
    for entry in std::fs::read_dir(golden_dir()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !name.ends_with(".ekl1") || name.ends_with(".in.ekl1") {
            continue;
        }
        seen += 1;
        let text = std::fs::read_to_string(&path).unwrap();
        let m = parse_file(&path);
        assert_eq!(print(&m), text, "{name} is not in canonical form");
        assert_eq!(strip(&m), strip(&parse(&SourceFile::new("again", print(&m))).unwrap()));
    }
    assert!(seen >= 3, "expected golden modules in {}", golden_dir().display());
}

#[test]
fn noncanonical_inputs_print_as_their_golden_output() {
    let bless = std::env::var_os("EKB_BLESS").is_some();
    let mut seen = 0;
    for entry in std::fs::read_dir(golden_dir()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let Some(stem) = name.strip_suffix(".in.ekl1") else { continue };
        seen += 1;
        let printed = print(&parse_file(&path));
        let out = golden_dir().join(format!("{stem}.out.ekl1"));
        if bless {
            std::fs::write(&out, &printed).unwrap();
        }
        let want = std::fs::read_to_string(&out).unwrap_or_default();
        assert_eq!(printed, want, "{name}: canonical form changed (EKB_BLESS=1 rewrites {stem}.out.ekl1)");
    }
    assert!(seen >= 1);
}

fn expr_of(text: &str) -> Expr {
    let src = format!("module m {{\n  kernel k() {{\n    let v = {text}\n  }}\n}}\n");
    let m = parse(&SourceFile::new("e", src)).unwrap_or_else(|d| panic!("{d}"));
    match &m.kernels[0].body[0] {
        Stmt::Let { value, .. } => value.clone(),
        s => panic!("{s:?}"),
    }
}

#[test]
fn parentheses_are_minimal_and_associativity_is_kept() {
    for (written, canonical) in [
        ("a - (b - c)", "a - (b - c)"),
        ("(a - b) - c", "a - b - c"),
        ("a * (b + c)", "a * (b + c)"),
        ("(a * b) + c", "a * b + c"),
        ("a - -3", "a - (-3)"),
        ("a + -x", "a + -x"),
        ("a - -x", "a - (-x)"),
        ("a < -1", "a < -1"),
        ("-x * y", "-x * y"),
        ("-(x * y)", "-(x * y)"),
        ("-(3)", "-(3)"),
        ("- -3", "-(-3)"),
        ("--x", "-(-x)"),
        ("!(a < b) || c && d", "!(a < b) || c && d"),
        ("(a || b) && c", "(a || b) && c"),
        ("(a < b) == c", "(a < b) == c"),
        ("a == (b < c)", "a == (b < c)"),
        ("x[i * 2 + 1, (j)]", "x[i * 2 + 1, j]"),
        ("select(c, f32(i), exp(-0.5))", "select(c, f32(i), exp(-0.5))"),
        ("-inf", "-inf"),
        ("max(a, b) % 3", "max(a, b) % 3"),
    ] {
        let e = expr_of(written);
        assert_eq!(print_expr(&e), canonical, "{written}");
        assert_eq!(print_expr(&expr_of(canonical)), canonical);
    }
}

#[test]
fn literals_read_back_exactly() {
    assert_eq!(expr_of("-3").kind, ExprKind::Int(-3));
    assert_eq!(expr_of("-2147483648").kind, ExprKind::Int(i32::MIN));
    assert!(
        matches!(expr_of("-(3)").kind, ExprKind::Unary { op: UnOp::Neg, arg } if arg.kind == ExprKind::Int(3))
    );
    for x in [0.1f32, 1.0, -0.0, 1e-5, 3.4028235e38, 1.0e-45, 16777217.0, 0.3, f32::INFINITY] {
        let text = ekb_ir::l1::print::fmt_f32(x);
        match expr_of(&text).kind {
            ExprKind::Float(y) => assert_eq!(y.to_bits(), x.to_bits(), "{text}"),
            k => panic!("{text}: {k:?}"),
        }
    }
    assert_eq!(ekb_ir::l1::print::fmt_f32(2.0), "2.0");
    assert_eq!(ekb_ir::l1::print::fmt_f32(0.1), "0.1");
}

mod generated {
    use super::*;
    use ekb_ir::types::{DType, TensorType};
    use proptest::prelude::*;

    fn name() -> impl Strategy<Value = String> {
        prop::sample::select(vec!["a", "b", "i", "acc", "x_1", "exp_"]).prop_map(String::from)
    }

    fn float() -> impl Strategy<Value = f32> {
        prop_oneof![
            any::<f32>().prop_filter("NaN never equals itself", |x| !x.is_nan()),
            prop::sample::select(vec![
                0.0f32,
                -0.0,
                1.0,
                -0.5,
                1e-5,
                f32::INFINITY,
                f32::NEG_INFINITY,
                16777217.0
            ]),
        ]
    }

    fn expr() -> impl Strategy<Value = Expr> {
        let leaf = prop_oneof![
            any::<i32>().prop_map(ExprKind::Int),
            float().prop_map(ExprKind::Float),
            any::<bool>().prop_map(ExprKind::Bool),
            name().prop_map(ExprKind::Var),
        ]
        .prop_map(Expr::new);
        leaf.prop_recursive(5, 48, 3, |inner| {
            let bin = prop::sample::select(vec![
                BinOp::Add,
                BinOp::Sub,
                BinOp::Mul,
                BinOp::Div,
                BinOp::Rem,
                BinOp::Lt,
                BinOp::Le,
                BinOp::Gt,
                BinOp::Ge,
                BinOp::Eq,
                BinOp::Ne,
                BinOp::And,
                BinOp::Or,
            ]);
            prop_oneof![
                (name(), prop::collection::vec(inner.clone(), 0..3))
                    .prop_map(|(b, index)| ExprKind::Load { buf: Name::new(b), index }),
                (prop::sample::select(vec![UnOp::Neg, UnOp::Not]), inner.clone())
                    .prop_map(|(op, a)| ExprKind::Unary { op, arg: Box::new(a) }),
                (bin, inner.clone(), inner.clone()).prop_map(|(op, l, r)| ExprKind::Binary {
                    op,
                    lhs: Box::new(l),
                    rhs: Box::new(r)
                }),
                (inner.clone(), inner.clone(), inner.clone()).prop_map(|(c, a, b)| ExprKind::Select {
                    cond: Box::new(c),
                    then_val: Box::new(a),
                    else_val: Box::new(b)
                }),
                (prop::sample::select(vec![Ty::F32, Ty::I32]), inner.clone())
                    .prop_map(|(to, a)| ExprKind::Cast { to, arg: Box::new(a) }),
                (prop::sample::select(Intrinsic::ALL.to_vec()), inner.clone(), inner.clone()).prop_map(
                    |(func, a, b)| {
                        let args = if func.arity() == 2 { vec![a, b] } else { vec![a] };
                        ExprKind::Call { func, args }
                    }
                ),
            ]
            .prop_map(Expr::new)
        })
    }

    fn stmts() -> impl Strategy<Value = Vec<Stmt>> {
        let simple = prop_oneof![
            (name(), expr()).prop_map(|(name, value)| Stmt::Let { name, value, span: Span::NONE }),
            (name(), prop::collection::vec(expr(), 0..3), expr()).prop_map(|(b, index, value)| {
                Stmt::Store { buf: Name::new(b), index, value, span: Span::NONE }
            }),
            (name(), prop::collection::vec(0usize..9, 0..3)).prop_map(|(name, shape)| Stmt::Alloc {
                name,
                ty: TensorType::new(DType::I32, shape),
                scope: Scope::Local,
                span: Span::NONE
            }),
        ];
        let body = simple.prop_recursive(3, 24, 3, |inner| {
            let block = prop::collection::vec(inner, 0..3);
            let kind = prop::sample::select(vec![
                LoopKind::Serial,
                LoopKind::Parallel,
                LoopKind::Vectorize,
                LoopKind::Unroll,
            ]);
            prop_oneof![
                (name(), kind, expr(), expr(), block.clone()).prop_map(|(var, kind, lo, hi, body)| {
                    Stmt::Loop { var, kind, lo, hi, body, span: Span::NONE }
                }),
                (expr(), block.clone(), block).prop_map(|(cond, then_body, else_body)| Stmt::If {
                    cond,
                    then_body,
                    else_body,
                    span: Span::NONE
                }),
            ]
        });
        prop::collection::vec(body, 0..4)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// Any tree the printer can print reads back as the same tree.
        #[test]
        fn print_then_parse_is_the_identity(body in stmts()) {
            let m = Module {
                name: "g".into(),
                buffers: vec![BufferDecl {
                    name: "a".into(),
                    ty: TensorType::new(DType::F32, [2, 3]),
                    role: BufferRole::Input,
                    span: Span::NONE,
                }],
                kernels: vec![Kernel { name: "k".into(), params: vec![], body, span: Span::NONE }],
                plan: vec![Run { kernel: "k".into(), args: vec![Name::new("a")], span: Span::NONE, prepare: false }],
                span: Span::NONE,
            };
            let text = print(&m);
            let mut back = parse(&SourceFile::new("p", text.clone()))
                .unwrap_or_else(|d| panic!("{d}\n{text}"));
            clear_spans(&mut back);
            prop_assert_eq!(back, m, "{}", text);
        }
    }
}
