//! The model's tokenizer, made from the folder's files with the settings fastembed gives it
//! (padding to the longest text of a call, truncation at [`super::MAX_TOKENS`] or the model's
//! own limit, the special tokens of `special_tokens_map.json`). fastembed parses the tokenizer
//! after building the session, one after the other; made here, the tokenizer's 0.5 MB of JSON
//! is parsed on one core while ONNX Runtime builds the session on the other (see
//! docs/benchmarks.md, "Loading the model").

use fastembed::TokenizerFiles;
use serde_json::Value;
use tokenizers::{AddedToken, PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

/// A tokenizer of one word, which fastembed parses at once while the session is built; it is
/// replaced by the model's own before any text is embedded.
pub(super) const PLACEHOLDER: &str = concat!(
    r#"{"version":"1.0","truncation":null,"padding":null,"added_tokens":[],"#,
    r#""normalizer":null,"pre_tokenizer":null,"post_processor":null,"decoder":null,"#,
    r#""model":{"type":"WordLevel","vocab":{"[UNK]":0},"unk_token":"[UNK]"}}"#
);

/// What is wrong with one of the tokenizer files: its name and the parser's message.
pub(super) type Problem = (&'static str, String);

/// The tokenizer of `files`, cutting texts at `max_tokens`.
pub(super) fn build(files: &TokenizerFiles, max_tokens: usize) -> Result<Tokenizer, Problem> {
    fn json(name: &'static str, bytes: &[u8]) -> Result<Value, Problem> {
        serde_json::from_slice(bytes).map_err(|e| (name, e.to_string()))
    }
    let config = json("config.json", &files.config_file)?;
    let special = json("special_tokens_map.json", &files.special_tokens_map_file)?;
    let settings = json("tokenizer_config.json", &files.tokenizer_config_file)?;
    let mut tokenizer = Tokenizer::from_bytes(&files.tokenizer_file)
        .map_err(|e| ("tokenizer.json", e.to_string()))?;
    let missing = |what: &str| ("tokenizer_config.json", format!("it has no {what}"));
    let model_max = settings["model_max_length"]
        .as_f64()
        .ok_or_else(|| missing("numeric `model_max_length`"))?;
    let pad = &settings["pad_token"];
    let pad_token = pad
        .as_str()
        .or_else(|| pad["content"].as_str())
        .ok_or_else(|| missing("string `pad_token`"))?
        .to_string();
    let pad_id = config["pad_token_id"]
        .as_u64()
        .and_then(|id| u32::try_from(id).ok())
        .or_else(|| tokenizer.token_to_id(&pad_token))
        .unwrap_or(0);
    let padding = PaddingParams {
        strategy: PaddingStrategy::BatchLongest,
        pad_token,
        pad_id,
        ..Default::default()
    };
    // A limit written as a huge float (some models say 1e30) saturates to usize::MAX.
    let max_length = max_tokens.min(model_max as f32 as usize);
    tokenizer
        .with_padding(Some(padding))
        .with_truncation(Some(TruncationParams { max_length, ..Default::default() }))
        .map_err(|e| ("tokenizer_config.json", e.to_string()))?;
    let Value::Object(special) = special else { return Ok(tokenizer) };
    for value in special.values() {
        let token = match value {
            Value::String(content) => {
                AddedToken { content: content.clone(), special: true, ..Default::default() }
            }
            Value::Object(fields) => {
                let flag = |name: &str| fields.get(name).and_then(Value::as_bool);
                let content = fields.get("content").and_then(Value::as_str);
                let (
                    Some(content),
                    Some(single_word),
                    Some(lstrip),
                    Some(rstrip),
                    Some(normalized),
                ) = (
                    content,
                    flag("single_word"),
                    flag("lstrip"),
                    flag("rstrip"),
                    flag("normalized"),
                )
                else {
                    continue;
                };
                AddedToken {
                    content: content.to_string(),
                    special: true,
                    single_word,
                    lstrip,
                    rstrip,
                    normalized,
                }
            }
            _ => continue,
        };
        tokenizer
            .add_special_tokens([token])
            .map_err(|e| ("special_tokens_map.json", e.to_string()))?;
    }
    Ok(tokenizer)
}
