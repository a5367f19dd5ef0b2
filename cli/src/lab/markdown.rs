//! Markdown tables of the experiments' reports.

/// One table row: `| a | b |` and a line break.
pub fn row<S: AsRef<str>>(cells: &[S]) -> String {
    let cells: Vec<&str> = cells.iter().map(AsRef::as_ref).collect();
    format!("| {} |\n", cells.join(" | "))
}

/// The header of a table: its row of names and the rule below it.
pub fn header<S: AsRef<str>>(cells: &[S]) -> String {
    row(cells) + &row(&vec!["---"; cells.len()])
}

/// A whole table: the first row is the header.
pub fn table(rows: &[Vec<String>]) -> String {
    let mut s = String::new();
    for (i, r) in rows.iter().enumerate() {
        s += &if i == 0 { header(r) } else { row(r) };
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_have_a_rule_below_the_header() {
        let rows = vec![
            vec!["a".to_string(), "b".into()],
            vec!["1".into(), "2".into()],
        ];
        assert_eq!(table(&rows), "| a | b |\n| --- | --- |\n| 1 | 2 |\n");
        assert_eq!(header(&["x"]), "| x |\n| --- |\n");
    }
}
