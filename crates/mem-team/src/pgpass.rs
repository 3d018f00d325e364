//! `~/.pgpass` as libpq reads it: `host:port:database:user:password` lines, `*` matching
//! anything, `\:` and `\\` escaped; the first line that matches gives the password. The binary
//! reads the file (only when no one else may read it, as libpq does); this is the lookup.

/// The password of the first line of `text` that matches the connection.
pub fn lookup(text: &str, host: &str, port: u16, database: &str, user: &str) -> Option<String> {
    let port = port.to_string();
    let wanted = [host, port.as_str(), database, user];
    text.lines().filter(|l| !l.starts_with('#')).find_map(|line| {
        let fields = split(line);
        if fields.len() != 5 {
            return None;
        }
        let matches = fields.iter().zip(wanted).all(|(field, want)| field == "*" || field == want);
        matches.then(|| fields[4].clone())
    })
}

/// The fields of a line, unescaped.
fn split(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => fields.last_mut().unwrap().extend(chars.next()),
            ':' if fields.len() < 5 => fields.push(String::new()),
            c => fields.last_mut().unwrap().push(c),
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::lookup;

    #[test]
    fn the_first_matching_line_gives_the_password_with_escapes() {
        let text = "# comment\nother:5432:*:*:no\n127.0.0.1:*:team:ana:a\\:b\\\\c\n*:*:*:*:any\n";
        assert_eq!(lookup(text, "127.0.0.1", 5433, "team", "ana").as_deref(), Some("a:b\\c"));
        assert_eq!(lookup(text, "127.0.0.1", 5433, "team", "bo").as_deref(), Some("any"));
        assert_eq!(lookup("h:1:d:u\n", "h", 1, "d", "u"), None);
    }
}
