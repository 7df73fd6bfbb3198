//! How errors are shown: the message, then each cause of its chain that the
//! text before does not already contain (`object_store`'s errors repeat
//! their source inside their own message, so a plain chain says the same
//! thing two or three times).

/// The lines an error is reported with: `error: <message>`, then one
/// `  caused by: <cause>` per cause in its chain, leaving out a cause whose
/// text the lines before already contain (storage errors of `object_store`
/// repeat their source inside their own message).
pub fn lines(e: &anyhow::Error) -> Vec<String> {
    let mut said = e.to_string();
    let mut lines = vec![format!("error: {said}")];
    for cause in e.chain().skip(1) {
        let text = cause.to_string();
        if text.trim().is_empty() || said.contains(text.trim()) {
            continue;
        }
        lines.push(format!("  caused by: {text}"));
        said.push('\n');
        said.push_str(&text);
    }
    lines
}

/// The error on one line: the message and its new causes joined with `: `
/// (for warnings).
pub fn one_line(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for (k, l) in lines(e).into_iter().enumerate() {
        let text = if k == 0 {
            l.trim_start_matches("error: ").to_string()
        } else {
            l.trim_start_matches("  caused by: ").to_string()
        };
        if k > 0 {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{lines as error_lines, one_line};

    #[test]
    fn causes_repeated_in_earlier_lines_are_left_out() {
        #[derive(Debug)]
        struct Wrapped(std::io::Error);
        impl std::fmt::Display for Wrapped {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "Generic S3 error: {}", self.0)
            }
        }
        impl std::error::Error for Wrapped {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "connection refused");
        let e = anyhow::Error::new(Wrapped(io)).context("listing s3://b/run").context("cannot use the run directory");
        assert_eq!(
            error_lines(&e),
            vec![
                "error: cannot use the run directory",
                "  caused by: listing s3://b/run",
                "  caused by: Generic S3 error: connection refused",
            ]
        );
        assert_eq!(
            one_line(&e),
            "cannot use the run directory: listing s3://b/run: Generic S3 error: connection refused"
        );
        let plain = anyhow::anyhow!("disk full").context("writing x");
        assert_eq!(error_lines(&plain), vec!["error: writing x", "  caused by: disk full"]);
    }
}
