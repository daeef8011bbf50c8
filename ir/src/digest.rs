//! Content digests: how a bundle names its own content and a model file's
//! bytes (`sha256:<hex>`).

use sha2::{Digest, Sha256};

/// `sha256:<hex>` of `bytes`: how a bundle names its own content and a
/// model file's bytes.
pub fn sha256_of(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut hex = String::with_capacity(7 + 64);
    hex.push_str("sha256:");
    for byte in digest.iter() {
        hex.push_str(&format!("{byte:02x}"));
    }
    hex
}
