use crate::util::Dir;

#[test]
fn context_fits_the_budget_and_puts_the_task_first() {
    let dir = Dir::example();
    let full =
        dir.mem(&["context", "--task", "why does the login test fail", "--budget", "100000"]);
    let text = full.ok();
    let task = text.find("## For the task: why does the login test fail").expect("task section");
    let key = text.find("## Key memories").expect("key section");
    assert!(task < key, "{text}");
    assert!(text.contains("Post-mortem: why the login test fails"), "{text}");
    assert!(!text.contains("left out"), "{text}");
    for budget in ["300", "1000", "2500"] {
        let out =
            dir.mem(&["context", "--task", "why does the login test fail", "--budget", budget]);
        let text = out.ok();
        assert!(
            text.chars().count() <= budget.parse().unwrap(),
            "{budget}: {}",
            text.chars().count()
        );
        assert!(
            text.contains(&format!("more memories left out to fit {budget} characters")),
            "{text}"
        );
        for line in text.lines().filter(|l| l.starts_with("- **")) {
            assert!(full.stdout.contains(line), "only whole entries: {line}");
        }
    }
    let plain = dir.mem(&["context"]);
    assert!(plain.ok().starts_with("# Memory (from mem)\n\n## Key memories\n"), "{}", plain.stdout);
    assert!(!plain.stdout.contains("episodic"), "key memories are procedural and semantic");
}
