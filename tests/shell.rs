//! Shell integration: `mem completions` and `mem man`, generated from the clap definitions.

use std::process::Command;

use crate::util::{Dir, bin, run};

/// Every subcommand `mem --help` lists (the "Commands:" section), `help` aside.
fn subcommands() -> Vec<String> {
    let help = run(Command::new(bin()).arg("--help"));
    let text = help.ok();
    let start = text.find("Commands:\n").expect("a Commands section") + "Commands:\n".len();
    text[start..]
        .lines()
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(String::from)
        .collect()
}

#[test]
fn completions_name_every_subcommand_and_need_no_root() {
    let names = subcommands();
    for expected in ["recall", "prune", "health", "completions", "man"] {
        assert!(names.iter().any(|n| n == expected), "{expected} not in {names:?}");
    }
    // No memory root anywhere: a folder without mem.toml, and no MEM_DIR.
    let empty = Dir::new();
    for shell in ["bash", "zsh", "fish"] {
        let out = run(Command::new(bin()).args(["completions", shell]).current_dir(empty.path()));
        let script = out.ok();
        for name in &names {
            assert!(script.contains(name.as_str()), "{shell}: {name} missing");
        }
        assert!(out.stderr.is_empty(), "{shell}: {}", out.stderr);
    }
    let bash = run(Command::new(bin()).args(["completions", "bash"]));
    assert!(bash.ok().contains("complete -F _mem"), "{}", bash.stdout);
    assert!(bash.stdout.contains("--transcripts"), "options of subcommands are completed");
    assert!(std::fs::read_dir(empty.path()).unwrap().next().is_none(), "nothing written");
}

#[test]
fn an_unknown_shell_is_clap_s_usage_error() {
    let out = run(Command::new(bin()).args(["completions", "nosuchshell"]));
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stdout.is_empty());
    assert!(out.stderr.contains("invalid value 'nosuchshell' for '<SHELL>'"), "{}", out.stderr);
    assert!(out.stderr.contains("bash") && out.stderr.contains("zsh"), "{}", out.stderr);
}

#[test]
fn the_man_page_is_roff_naming_the_commands() {
    let out = run(Command::new(bin()).arg("man"));
    let page = out.ok();
    assert!(page.contains(".TH mem 1"), "{page}");
    assert!(page.contains(".SH NAME") && page.contains(".SH SYNOPSIS"), "{page}");
    for name in subcommands() {
        assert!(page.contains(&format!("mem\\-{name}(1)")), "{name} missing:\n{page}");
    }

    let dir = Dir::new();
    let out_dir = dir.path().join("man/man1");
    run(Command::new(bin()).args(["man", "--out", out_dir.to_str().unwrap()])).ok();
    let recall = std::fs::read_to_string(out_dir.join("mem-recall.1")).unwrap();
    assert!(recall.contains(".TH mem-recall 1"), "{recall}");
    assert!(recall.contains("\\-\\-explain"), "{recall}");
    assert!(out_dir.join("mem.1").is_file());
    for name in subcommands() {
        assert!(out_dir.join(format!("mem-{name}.1")).is_file(), "mem-{name}.1 missing");
    }
}
