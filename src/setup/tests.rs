//! Unit tests of the shared parts of `mem setup`: mem's hook commands, the hooks' JSON
//! editing, and what `mem health` reads of the agents' files.

mod hooks {
    use std::path::Path;

    use crate::setup::command::*;
    use crate::setup::hooks::*;

    #[test]
    fn shell_words_quote_what_a_shell_would_split() {
        assert_eq!(shell_word(Path::new("/usr/bin/mem")).unwrap(), "/usr/bin/mem");
        assert_eq!(shell_word(Path::new("/home/a b/mem")).unwrap(), "'/home/a b/mem'");
        assert_eq!(shell_word(Path::new("/it's/mem")).unwrap(), r"'/it'\''s/mem'");
    }

    /// Defect 10 of the second probe: setup dropped hook commands the user wrote around mem.
    #[test]
    fn only_the_hooks_setup_writes_are_recognised() {
        assert!(is_mem_hook("/usr/bin/mem context --hook claude"));
        assert!(is_mem_hook("mem context --hook codex --budget 2000"));
        assert!(is_mem_hook("'/home/a b/mem' capture --hook codex"));
        assert!(is_mem_hook("/opt/mem checkpoint --hook claude"));
        assert!(is_mem_hook("/opt/mem capture --hook claude --project-only"));
        assert!(is_project_only("/opt/mem capture --hook claude --project-only"));
        assert!(!is_project_only("/opt/mem capture --hook claude"));
        assert!(!is_mem_hook("mem --project-only"));
        assert!(!is_mem_hook("/usr/bin/mem capture"));
        assert!(!is_mem_hook("memo --hook x"));
        assert!(!is_mem_hook("./notify.sh --hook mem"));
        assert!(!is_mem_hook("mem session resume --hook claude --budget 3000"));
        assert!(!is_mem_hook("mem capture --hook claude && notify-send done"));
        assert!(!is_mem_hook("mem context --hook claude --budget 4000"));
        assert!(is_mem_hook("mem context --hook gemini"));
        assert!(!is_mem_hook("mem context --hook cursor"));
    }

    /// Item 1 of the third probe: the commands end with a guard, and the old shape is mem's too.
    #[test]
    fn guarded_and_unguarded_hooks_are_both_mem_s() {
        assert!(is_mem_hook("mem context --hook gemini || true"));
        assert!(is_mem_hook("'/a b/mem' capture --hook codex || true"));
        assert!(is_project_only("mem capture --hook claude --project-only || true"));
        assert!(is_project_only("mem capture --hook claude --project-only"));
        assert!(!is_project_only("mem capture --hook claude || true"));
        assert!(!is_mem_hook("mem capture --hook claude || notify-send failed"));
        assert!(!is_mem_hook("mem capture --hook claude || true || true"));
    }

    /// Issue #49: the hooks of a setup at user scope end with `--user-scope`; those an older
    /// setup wrote without it are mem's too, and are the ones health calls unmarked.
    #[test]
    fn user_scope_hooks_are_mem_s_with_or_without_the_marker() {
        assert!(is_mem_hook("/opt/mem context --hook claude --user-scope || true"));
        assert!(is_mem_hook("/opt/mem context --hook codex --budget 2000 --user-scope"));
        assert!(!is_project_only("/opt/mem capture --hook claude --user-scope || true"));
        assert!(!is_unmarked("/opt/mem capture --hook claude --user-scope || true"));
        assert!(!is_unmarked("/opt/mem capture --hook claude --project-only || true"));
        assert!(is_unmarked("/opt/mem capture --hook claude || true"));
        assert!(!is_unmarked("./notify.sh capture --hook claude"));
        assert!(!is_mem_hook("mem capture --hook claude --user-scope --project-only"));
        assert!(!is_mem_hook("mem --user-scope"));
        let written = |started| {
            hooks(std::path::Path::new("/opt/mem"), mem::agent::Agent::Claude, false, started)
                .unwrap()
                .into_iter()
                .map(|h| h.command)
                .collect::<Vec<_>>()
        };
        use crate::shared::gate::Started;
        for command in written(Started::UserScope) {
            assert!(command.ends_with(" --user-scope || true"), "{command}");
            assert!(is_mem_hook(&command) && !is_unmarked(&command), "{command}");
        }
        for command in written(Started::Own) {
            assert!(is_unmarked(&command) && !command.contains("--user-scope"), "{command}");
        }
    }

    /// Item 3 of the third probe: an executable not named `mem` is mem's when it is this one.
    #[test]
    fn the_running_executable_is_mem_s_whatever_its_name() {
        let this = std::env::current_exe().unwrap();
        assert!(is_mem_exe(this.to_str().unwrap()));
        assert!(!is_mem_exe("/bin/sh"));
        let hook = format!("{} context --hook codex || true", this.display());
        assert!(is_mem_hook(&hook));
    }
}

mod json {
    use std::path::Path;

    use serde_json::Value;

    use crate::setup::command::Hook;
    use crate::setup::hooks::hooks;
    use crate::setup::json::*;
    use crate::shared::gate::Started;
    use mem::agent::Agent;

    fn mine() -> Vec<Hook> {
        hooks(Path::new("mem"), Agent::Claude, true, Started::Own).unwrap()
    }

    /// Item 14 of the third probe: a file on one line stays on one line, and `--remove` gives
    /// back its bytes; a spread file too.
    #[test]
    fn setup_then_remove_gives_back_the_bytes() {
        let path = Path::new("settings.json");
        for text in [
            r#"{"model":"opus"}"#,
            r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"x"}]}]},"a":1}"#,
            "{\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"Stop\": [{ \"hooks\": [] }]\n  }\n}\n",
            "{\n\t\"hooks\": {\n\t\t\"Stop\": [\n\t\t\t{ \"hooks\": [] }\n\t\t]\n\t} // mine\n}",
        ] {
            let added = with_hooks_of(Some(text), path, &mine(), |_| true).unwrap().unwrap();
            assert_eq!(text.lines().count() == 1, added.lines().count() == 1, "{added}");
            let value: Value = serde_json::from_str(&added.replace("// mine", "")).unwrap();
            assert_eq!(value["hooks"]["UserPromptSubmit"].as_array().unwrap().len(), 2, "{added}");
            let again = with_hooks_of(Some(&added), path, &mine(), |_| true).unwrap().unwrap();
            assert_eq!(again, added);
            let removed = with_hooks_of(Some(&added), path, &[], |_| true).unwrap().unwrap();
            assert_eq!(removed, text);
        }
    }

    /// Item 13 of the third probe: an event that is not a list, and a key setup would edit
    /// that is repeated, are refused with the file and the key named.
    #[test]
    fn what_the_agent_would_not_read_is_refused() {
        let path = Path::new("/h/settings.json");
        for (text, named) in [
            (r#"{"hooks":{"Stop":{"hooks":[]}}}"#, "hook event `Stop`"),
            (r#"{"hooks":{"Stop":"x"}}"#, "hook event `Stop`"),
            (r#"{"hooks":{},"hooks":{}}"#, "`hooks` appears 2 times"),
            (r#"{"hooks":{"Stop":[],"Stop":[]}}"#, "`Stop` in `hooks` appears 2 times"),
            (r#"{"hooks":{"Stop":[{"hooks":[],"hooks":[]}]}}"#, "in a group of `Stop`"),
        ] {
            let error = with_hooks_of(Some(text), path, &mine(), |_| true).unwrap_err();
            let error = error.to_string();
            assert!(error.contains(named) && error.contains("/h/settings.json"), "{error}");
        }
        // An event setup does not edit is left as it is.
        let other = r#"{"hooks":{"Notification":{"x":1}}}"#;
        assert!(with_hooks_of(Some(other), path, &mine(), |_| true).is_ok());
        assert_eq!(
            with_hooks_of(Some(other), path, &[], |_| true).unwrap().as_deref(),
            Some(other)
        );
    }
}

mod check {
    use mem::agent::Homes;

    use crate::setup::check::*;
    use crate::setup::command::program_of;

    #[test]
    fn programs_are_split_from_their_arguments() {
        assert_eq!(program_of("mem context --hook claude"), Some(("mem", "context --hook claude")));
        assert_eq!(program_of("'/a b/mem' mcp"), Some(("/a b/mem", " mcp")));
        assert_eq!(program_of("mem"), Some(("mem", "")));
        assert_eq!(program_of("'unclosed"), None);
    }

    #[test]
    fn every_file_that_runs_mem_is_listed_with_what_it_starts() {
        let dir = tempfile::tempdir().unwrap();
        let (project, home) = (dir.path().join("repo"), dir.path().join("home"));
        std::fs::create_dir_all(project.join(".codex")).unwrap();
        std::fs::create_dir_all(home.join(".claude")).unwrap();
        let hooks = r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"/nowhere/mem capture --hook claude"},{"type":"command","command":"notify-send done"}]}]}}"#;
        std::fs::write(home.join(".claude/settings.json"), hooks).unwrap();
        std::fs::write(project.join(".mcp.json"), r#"{"mcpServers":{"mem":{"command":"mem"}}}"#)
            .unwrap();
        std::fs::write(
            project.join(".codex/config.toml"),
            "notify = [\"/bin/sh\"]\n[mcp_servers.mem]\ncommand = \"/nowhere/mem\"\n",
        )
        .unwrap();
        let homes = Homes::new(Some(home.clone()), |_| None);
        let found = configured(&project, &homes);
        let listed: Vec<(&str, bool)> =
            found.iter().map(|c| (c.file.rsplit('/').next().unwrap(), c.runs.is_some())).collect();
        // /nowhere/mem resolves to nothing; whether `mem` does depends on this machine's PATH.
        assert_eq!(listed.len(), 3, "{found:?}");
        assert_eq!(listed[0].0, ".mcp.json");
        assert_eq!(listed[1], ("settings.json", false));
        assert_eq!(listed[2], ("config.toml", false));
    }
}

mod own_file {
    use std::path::Path;

    use crate::setup::own_file;

    #[test]
    fn a_file_of_mem_s_is_written_replaced_and_removed_and_the_user_s_is_kept() {
        let path = Path::new("/p/plugin.js");
        let first = "// mem's plugin";
        let ours = "// mem's plugin\nexport const A = 1;\n";
        assert_eq!(own_file(None, path, Some(ours), first).unwrap().as_deref(), Some(ours));
        let old = "// mem's plugin\nold\n";
        assert_eq!(own_file(Some(old), path, Some(ours), first).unwrap().as_deref(), Some(ours));
        assert_eq!(own_file(Some(ours), path, None, first).unwrap(), None);
        assert_eq!(own_file(None, path, None, first).unwrap(), None);
        let theirs = "// my plugin\n";
        assert_eq!(own_file(Some(theirs), path, None, first).unwrap().as_deref(), Some(theirs));
        let error = own_file(Some(theirs), path, Some(ours), first).unwrap_err().to_string();
        assert!(error.contains("/p/plugin.js") && error.contains("did not write it"), "{error}");
    }
}
