//! `rulec schema`: the JSON Schema of contract files, for editors
//! (yaml-language-server) and CI (docs/contract.schema.json is a copy).

/// Print the JSON Schema of contract files.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  rulec schema > contract.schema.json\n  # in a contract, for yaml-language-server:\n  # yaml-language-server: $schema=contract.schema.json"
)]
pub struct Args {}

pub fn run(_args: Args) -> crate::Outcome {
    print!("{}", frontend::schema::text());
    Ok(())
}
