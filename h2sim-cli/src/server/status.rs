//! The status a rule answers with. A rule's response is a whole one, so
//! its status is final: 200-599. RFC 9110 §15 defines 100-599, but a 1xx
//! is interim (§15.2), so a client given one waits for a final answer that
//! would never come, and 101 does not exist in HTTP/2 (RFC 9113 §8.6).
//! Written statuses are checked at start ([`final_status`]); one that a
//! template gives is checked per request, and a bad one answers 500.

use std::fmt;

/// Why a status cannot be a rule's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatusError {
    /// Not a number at all.
    NotANumber(String),
    /// A number outside RFC 9110 §15's 100-599.
    OutOfRange(i64),
    /// A 1xx: interim, never a whole response.
    Interim(u16),
}

impl fmt::Display for StatusError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StatusError::NotANumber(text) => {
                write!(f, "{text:?} is not a status code (100-599, RFC 9110 §15)")
            }
            StatusError::OutOfRange(code) => {
                write!(f, "{code} is not a status code (100-599, RFC 9110 §15)")
            }
            StatusError::Interim(101) => f.write_str(
                "101 cannot answer a request: a rule's response is final (200-599), and HTTP/2 has no 101 (RFC 9113 §8.6)",
            ),
            StatusError::Interim(code) => write!(
                f,
                "{code} is interim (RFC 9110 §15.2): a rule's response is final (200-599)"
            ),
        }
    }
}

impl std::error::Error for StatusError {}

/// `code` as a rule's status: a final one.
pub fn final_code(code: i64) -> Result<u16, StatusError> {
    match u16::try_from(code) {
        Ok(code @ 200..=599) => Ok(code),
        Ok(code @ 100..=199) => Err(StatusError::Interim(code)),
        _ => Err(StatusError::OutOfRange(code)),
    }
}

/// `text` (spaces around it allowed) as a rule's status: a final one.
pub fn final_status(text: &str) -> Result<u16, StatusError> {
    let text = text.trim();
    let code = text
        .parse::<i64>()
        .map_err(|_| StatusError::NotANumber(text.to_owned()))?;
    final_code(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 9110 §15: 100-599; §15.2: 1xx are interim; RFC 9113 §8.6: no
    /// 101 in HTTP/2.
    #[test]
    fn only_final_statuses_answer() {
        assert_eq!(final_status("200"), Ok(200));
        assert_eq!(final_status(" 599 "), Ok(599));
        assert_eq!(final_status("100"), Err(StatusError::Interim(100)));
        assert_eq!(final_status("101"), Err(StatusError::Interim(101)));
        assert_eq!(final_status("600"), Err(StatusError::OutOfRange(600)));
        assert_eq!(final_status("999"), Err(StatusError::OutOfRange(999)));
        assert_eq!(final_status("99"), Err(StatusError::OutOfRange(99)));
        assert_eq!(final_code(-1), Err(StatusError::OutOfRange(-1)));
        assert_eq!(
            final_status("abc"),
            Err(StatusError::NotANumber("abc".into()))
        );
        assert!(
            StatusError::Interim(101)
                .to_string()
                .contains("RFC 9113 §8.6")
        );
    }
}
