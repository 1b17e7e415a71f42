//! docs/agent.md describes the tables as they are: every table and every column of a new tree
//! is named there, and the schema version it states is this build's.

use ekb_leka::tree::{schema::SCHEMA_VERSION, Tree};

#[test]
fn the_docs_name_every_table_and_column() {
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/agent.md")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("tree.sqlite");
    drop(Tree::open(&path).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    let mut tables = conn
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        .unwrap();
    let tables: Vec<String> = tables.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect();
    assert_eq!(tables.len(), 6, "{tables:?}");
    let mut missing = Vec::new();
    for table in &tables {
        if !docs.contains(&format!("`{table}`")) {
            missing.push(table.clone());
        }
        let mut cols = conn.prepare(&format!("SELECT name FROM pragma_table_info('{table}')")).unwrap();
        for col in cols.query_map([], |r| r.get::<_, String>(0)).unwrap().map(Result::unwrap) {
            if !docs.contains(&format!("`{col}`")) {
                missing.push(format!("{table}.{col}"));
            }
        }
    }
    assert!(missing.is_empty(), "docs/agent.md does not name: {missing:?}");
    assert!(docs.contains(&format!("(now {SCHEMA_VERSION})")), "docs/agent.md states another schema version");
}
