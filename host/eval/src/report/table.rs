//! A table of text cells, rendered as aligned terminal text, a Markdown pipe table or an HTML
//! table; every report format builds its tables once through [`Table`].
//!
//! What must stay true: every row has one cell per column; text columns line up (widths counted
//! in characters); Markdown cells never contain a raw `|`, `<` or `&` (they would end the cell
//! or open HTML); HTML cells are escaped.

use std::fmt::Write;

/// How a column's cells line up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// A titled table.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub title: String,
    pub head: Vec<String>,
    pub align: Vec<Align>,
    pub rows: Vec<Vec<String>>,
    /// Rows to highlight (HTML) or mark (text, Markdown), by index.
    pub marked: Vec<usize>,
}

impl Table {
    /// A table whose first `left` columns are left-aligned and the rest right-aligned.
    pub fn new(title: impl Into<String>, head: &[&str], left: usize) -> Table {
        Table {
            title: title.into(),
            head: head.iter().map(|h| h.to_string()).collect(),
            align: (0..head.len()).map(|i| if i < left { Align::Left } else { Align::Right }).collect(),
            rows: Vec::new(),
            marked: Vec::new(),
        }
    }

    pub fn push(&mut self, row: Vec<String>) {
        assert_eq!(row.len(), self.head.len(), "a row of table `{}` has the wrong width", self.title);
        self.rows.push(row);
    }

    /// Pushes a row and marks it.
    pub fn push_marked(&mut self, row: Vec<String>) {
        self.marked.push(self.rows.len());
        self.push(row);
    }

    fn widths(&self) -> Vec<usize> {
        (0..self.head.len())
            .map(|c| {
                self.rows
                    .iter()
                    .map(|r| r[c].chars().count())
                    .chain([self.head[c].chars().count()])
                    .max()
                    .unwrap_or(0)
            })
            .collect()
    }

    /// Aligned text: the title, the header, the rows; columns two spaces apart; no trailing
    /// spaces.
    pub fn to_text(&self) -> String {
        let widths = self.widths();
        let line = |cells: &[String]| {
            let mut s = String::new();
            for (c, cell) in cells.iter().enumerate() {
                if c > 0 {
                    s.push_str("  ");
                }
                let pad = widths[c] - cell.chars().count();
                match self.align[c] {
                    Align::Left => {
                        s.push_str(cell);
                        s.extend(std::iter::repeat_n(' ', pad));
                    }
                    Align::Right => {
                        s.extend(std::iter::repeat_n(' ', pad));
                        s.push_str(cell);
                    }
                }
            }
            s.trim_end().to_string()
        };
        let mut s = format!("{}\n", self.title);
        let _ = writeln!(s, "{}", line(&self.head));
        for r in &self.rows {
            let _ = writeln!(s, "{}", line(r));
        }
        s
    }

    /// A Markdown pipe table under a `###` heading.
    pub fn to_markdown(&self) -> String {
        let cell = |c: &str| c.replace('&', "&amp;").replace('<', "&lt;").replace('|', "\\|");
        let mut s = format!("### {}\n\n", self.title);
        let _ = writeln!(s, "| {} |", self.head.iter().map(|h| cell(h)).collect::<Vec<_>>().join(" | "));
        let rule: Vec<&str> =
            self.align.iter().map(|a| if *a == Align::Left { "---" } else { "--:" }).collect();
        let _ = writeln!(s, "| {} |", rule.join(" | "));
        for (i, r) in self.rows.iter().enumerate() {
            let mut cells: Vec<String> = r.iter().map(|c| cell(c)).collect();
            if self.marked.contains(&i) {
                cells[0] = format!("**{}**", cells[0]);
            }
            let _ = writeln!(s, "| {} |", cells.join(" | "));
        }
        s
    }

    /// An `<h3>` title and an HTML table; marked rows carry `class="flag"`.
    pub fn to_html(&self) -> String {
        let class = |a: Align| if a == Align::Right { " class=\"num\"" } else { "" };
        let mut s = format!("<h3>{}</h3>\n<table>\n<thead><tr>", escape(&self.title));
        for (h, a) in self.head.iter().zip(&self.align) {
            let _ = write!(s, "<th{}>{}</th>", class(*a), escape(h));
        }
        s.push_str("</tr></thead>\n<tbody>\n");
        for (i, r) in self.rows.iter().enumerate() {
            s.push_str(if self.marked.contains(&i) { "<tr class=\"flag\">" } else { "<tr>" });
            for (c, a) in r.iter().zip(&self.align) {
                let _ = write!(s, "<td{}>{}</td>", class(*a), escape(c));
            }
            s.push_str("</tr>\n");
        }
        s.push_str("</tbody>\n</table>\n");
        s
    }
}

/// Text made safe for HTML element content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table {
        let mut t = Table::new("T", &["name", "value"], 1);
        t.push(vec!["a|b".into(), "1.5%".into()]);
        t.push_marked(vec!["<long name>".into(), "12".into()]);
        t
    }

    #[test]
    fn text_columns_line_up() {
        assert_eq!(table().to_text(), "T\nname         value\na|b           1.5%\n<long name>     12\n");
    }

    #[test]
    fn markdown_escapes_pipes_and_marks_rows() {
        assert_eq!(
            table().to_markdown(),
            "### T\n\n| name | value |\n| --- | --: |\n| a\\|b | 1.5% |\n| **&lt;long name>** | 12 |\n"
        );
    }

    #[test]
    fn html_escapes_cells_and_flags_rows() {
        let h = table().to_html();
        assert!(
            h.contains("<tr class=\"flag\"><td>&lt;long name&gt;</td><td class=\"num\">12</td></tr>"),
            "{h}"
        );
        assert!(!h.contains("<long"));
    }
}
