//! Source code, `read_file` listings, diffs, search results and terminal output in a workspace's language.

use std::fmt::Write as _;

use super::workspace::{pascal, Tech, Workspace, NOUNS, VERBS};
use super::Slots;
use crate::rng::Rng;

const PY_STMTS: &[&str] = &[
    "{k} = {f}({k}s)",
    "if {k} is None:\n        raise {E}(\"missing {k}\")",
    "for item in {k}s:\n        result.append({g}(item))",
    "logger.debug(\"{f}: %d {k}s\", len(result))",
    "{k}s = [x for x in {k}s if x.get(\"{k}\") is not None]",
    "with open(path, encoding=\"utf-8\") as fh:\n        data = json.load(fh)",
    "timeout = settings.get(\"timeout\", {n})",
    "cache[key] = {g}(value)",
    "return {g}({k}, strict=True)",
    "try:\n        {k} = {f}(data)\n    except (KeyError, ValueError) as exc:\n        raise {E}(str(exc)) from exc",
];
const TS_STMTS: &[&str] = &[
    "const {k} = await {f}({k}s);",
    "if (!{k}) {\n    throw new {E}(`missing {k}`);\n  }",
    "for (const item of {k}s) {\n    result.push({g}(item));\n  }",
    "logger.debug(`{f}: ${result.length} {k}s`);",
    "const filtered = {k}s.filter((x) => x.{k} !== undefined);",
    "const timeout = options.timeout ?? {n};",
    "cache.set(key, {g}(value));",
    "return {g}({k}, { strict: true });",
    "try {\n    await {f}(payload);\n  } catch (err) {\n    throw new {E}(String(err));\n  }",
];
const RS_STMTS: &[&str] = &[
    "let {k} = {f}(&{k}s)?;",
    "if {k}.is_empty() {\n        return Err({E}::Missing(\"{k}\"));\n    }",
    "for item in &{k}s {\n        result.push({g}(item)?);\n    }",
    "tracing::debug!(count = result.len(), \"{f}\");",
    "let filtered: Vec<_> = {k}s.iter().filter(|x| x.{k}.is_some()).collect();",
    "let timeout = Duration::from_secs(settings.timeout.unwrap_or({n}));",
    "cache.insert(key.clone(), {g}(&value));",
    "Ok({g}(&{k}))",
    "let data = std::fs::read_to_string(path).map_err({E}::Io)?;",
];
const GO_STMTS: &[&str] = &[
    "{k}, err := {f}(ctx, {k}s)\n\tif err != nil {\n\t\treturn nil, fmt.Errorf(\"{f}: %w\", err)\n\t}",
    "if len({k}s) == 0 {\n\t\treturn nil, Err{C}Missing\n\t}",
    "for _, item := range {k}s {\n\t\tresult = append(result, {g}(item))\n\t}",
    "log.Debug(\"{f}\", zap.Int(\"count\", len(result)))",
    "timeout := cfg.Timeout\n\tif timeout == 0 {\n\t\ttimeout = {n} * time.Second\n\t}",
    "cache[key] = {g}(value)",
    "return {g}({k}), nil",
];

fn code_function(ws: &Workspace, slots: &Slots, rng: &mut Rng, out: &mut String) {
    let name = ws.func(rng);
    let arg = rng.pick(NOUNS);
    let (open, indent, stmts, close) = match ws.tech {
        Tech::Python => (format!("def {name}({arg}s, settings=None):\n    \"\"\"{}\"\"\"\n    result = []\n", pascal(&format!("{} the {arg}s.", rng.pick(VERBS)))), "    ", PY_STMTS, "    return result\n\n\n"),
        Tech::TypeScript => (format!("export async function {name}({arg}s: {}[], options: Options = {{}}): Promise<Result[]> {{\n  const result: Result[] = [];\n", pascal(arg)), "  ", TS_STMTS, "  return result;\n}\n\n"),
        Tech::Rust => (format!("pub fn {name}({arg}s: &[{}], settings: &Settings) -> Result<Vec<Output>, Error> {{\n    let mut result = Vec::new();\n", pascal(arg)), "    ", RS_STMTS, "    Ok(result)\n}\n\n"),
        Tech::Go => (format!("func {name}(ctx context.Context, {arg}s []{}) ([]Result, error) {{\n\tvar result []Result\n", pascal(arg)), "\t", GO_STMTS, "\treturn result, nil\n}\n\n"),
    };
    out.push_str(&open);
    for _ in 0..rng.between(2, 9) {
        out.push_str(indent);
        slots.fill_into(rng.pick(stmts), rng, out);
        out.push('\n');
    }
    out.push_str(close);
}

fn code_header(ws: &Workspace, slots: &Slots, rng: &mut Rng, out: &mut String) {
    let lib = slots.fill("{lib}", rng);
    match ws.tech {
        Tech::Python => {
            let _ = write!(out, "\"\"\"{}.\"\"\"\nimport json\nimport logging\nfrom pathlib import Path\n\nimport {lib}\n\nlogger = logging.getLogger(__name__)\n\n\n", pascal(&slots.fill("{m} helpers", rng)));
        }
        Tech::TypeScript => {
            let _ = write!(out, "import {{ logger }} from './utils';\nimport type {{ Options, Result }} from './types';\nimport * as lib from '{lib}';\n\n");
        }
        Tech::Rust => {
            let _ = write!(out, "//! {}.\n\nuse std::collections::HashMap;\nuse std::time::Duration;\n\nuse crate::error::Error;\n\n", pascal(&slots.fill("{m} helpers", rng)));
        }
        Tech::Go => {
            let _ = write!(
                out,
                "package {}\n\nimport (\n\t\"context\"\n\t\"fmt\"\n\t\"time\"\n)\n\n",
                slots.fill("{m}", rng)
            );
        }
    }
}

/// Source code of roughly `target` bytes.
pub fn code(ws: &Workspace, rng: &mut Rng, target: usize) -> String {
    let slots = Slots { ws };
    let mut s = String::with_capacity(target + 512);
    code_header(ws, &slots, rng, &mut s);
    while s.len() < target {
        code_function(ws, &slots, rng, &mut s);
    }
    s
}

/// `code` with line numbers, as `read_file` returns it.
pub fn numbered(code: &str, native_style: bool) -> String {
    let lines = code.lines().count().max(1);
    let width = lines.to_string().len();
    let mut s = String::with_capacity(code.len() + lines * (width + 4));
    for (i, line) in code.lines().enumerate() {
        if native_style {
            let _ = writeln!(s, "{} | {}", i + 1, line);
        } else {
            let _ = writeln!(s, "{:>width$} | {}", i + 1, line);
        }
    }
    s.pop();
    s
}

/// A SEARCH/REPLACE diff of about `lines` lines per side.
pub fn diff(ws: &Workspace, rng: &mut Rng, lines: usize) -> String {
    let old = code(ws, rng, lines * 40);
    let new = code(ws, rng, lines * 44);
    let start = rng.range(1, 300);
    let mut s = String::with_capacity(old.len() + new.len() + 64);
    let _ = write!(
        s,
        "<<<<<<< SEARCH\n:start_line:{start}\n-------\n{}\n=======\n{}\n>>>>>>> REPLACE",
        old.trim_end(),
        new.trim_end()
    );
    s
}

/// Search results in the `search_files` format.
pub fn search_results(ws: &Workspace, rng: &mut Rng, target: usize) -> String {
    let slots = Slots { ws };
    let mut body = String::with_capacity(target + 256);
    let mut count = 0;
    while body.len() < target {
        let _ = writeln!(body, "# {}", ws.source(rng));
        for _ in 0..rng.between(1, 4) {
            let ln = rng.range(3, 400);
            let _ = write!(body, "{:>3} |     ", ln);
            slots.fill_into(
                rng.pick(match ws.tech {
                    Tech::Python => PY_STMTS,
                    Tech::TypeScript => TS_STMTS,
                    Tech::Rust => RS_STMTS,
                    Tech::Go => GO_STMTS,
                })
                .lines()
                .next()
                .unwrap_or(""),
                rng,
                &mut body,
            );
            body.push('\n');
            count += 1;
        }
        body.push_str("----\n");
    }
    format!("Found {count} results.\n\n{}", body.trim_end())
}

/// Terminal output of a test or build command, roughly `target` bytes.
pub fn command_output(ws: &Workspace, rng: &mut Rng, target: usize, fail: bool) -> String {
    let slots = Slots { ws };
    let mut s = String::with_capacity(target + 512);
    let mut passed = 0u32;
    match ws.tech {
        Tech::Python => {
            let _ = write!(s, "============================= test session starts ==============================\nplatform linux -- Python 3.12.{}, pytest-8.{}.0, pluggy-1.5.0\nrootdir: {}\nconfigfile: pyproject.toml\ncollected {} items\n\n", rng.below(9), rng.below(4), ws.posix, rng.range(20, 400));
            while s.len() < target * 2 / 3 {
                let t = ws.test(rng);
                let n = rng.between(3, 40);
                let dots: String = (0..n)
                    .map(|_| if fail && rng.chance(0.05) { 'F' } else { '.' })
                    .collect();
                passed += n as u32;
                let _ = writeln!(s, "{t} {dots} [{:>3}%]", rng.range(1, 100));
            }
            if fail {
                s.push_str("\n=================================== FAILURES ===================================\n");
                while s.len() < target {
                    let f = ws.func(rng);
                    let _ = write!(s, "________________________________ test_{f} ________________________________\n\n");
                    let c = code(ws, rng, 400);
                    for line in c.lines().take(12) {
                        let _ = writeln!(s, "    {line}");
                    }
                    let _ = write!(s, ">       assert result == expected\nE       AssertionError: assert {} == {}\n\n{}:{}: AssertionError\n", rng.below(50), rng.below(50), ws.test(rng), rng.range(10, 300));
                }
                let _ = write!(s, "=========================== short test summary info ============================\nFAILED {}::test_{} - AssertionError\n========================= 1 failed, {passed} passed in {}.{:02}s =========================", ws.test(rng), ws.func(rng), rng.below(30), rng.below(100));
            } else {
                let _ = write!(s, "\n============================== {passed} passed in {}.{:02}s ==============================", rng.below(30), rng.below(100));
            }
        }
        Tech::TypeScript => {
            let _ = write!(
                s,
                "\n> {}@1.{}.0 test\n> vitest run\n\n RUN  v2.1.{} {}\n\n",
                ws.name,
                rng.below(9),
                rng.below(9),
                ws.posix
            );
            while s.len() < target {
                let t = ws.test(rng);
                let n = rng.between(2, 30);
                passed += n as u32;
                if fail && rng.chance(0.1) {
                    let _ = write!(s, " ❯ {t} ({n} tests | 1 failed) {}ms\n   × {} > {} 12ms\n     → expected {} to be {}\n", rng.range(5, 900), slots.fill("{m}", rng), slots.fill("{f} handles the empty {k}", rng), rng.below(20), rng.below(20));
                } else {
                    let _ = writeln!(s, " ✓ {t} ({n} tests) {}ms", rng.range(3, 900));
                }
            }
            let _ = write!(s, "\n Test Files  {} passed ({})\n      Tests  {passed} passed ({passed})\n   Start at  10:{:02}:{:02}\n   Duration  {}.{:02}s", rng.range(3, 40), rng.range(3, 40), rng.below(60), rng.below(60), rng.below(20), rng.below(100));
        }
        Tech::Rust => {
            let _ = write!(s, "   Compiling {} v0.{}.0 ({})\n    Finished `test` profile [unoptimized + debuginfo] target(s) in {}.{:02}s\n     Running unittests src/main.rs (target/debug/deps/{}-{})\n\nrunning {} tests\n", ws.name, rng.below(9), ws.posix, rng.below(60), rng.below(100), ws.name.replace('-', "_"), rng.hex(16), rng.range(10, 300));
            while s.len() < target {
                let m = slots.fill("{m}", rng);
                let f = ws.func(rng);
                let ok = !(fail && rng.chance(0.04));
                passed += u32::from(ok);
                let _ = writeln!(
                    s,
                    "test {m}::tests::{f} ... {}",
                    if ok { "ok" } else { "FAILED" }
                );
            }
            let _ = write!(s, "\ntest result: {}. {passed} passed; {} failed; 0 ignored; 0 measured; 0 filtered out; finished in {}.{:02}s", if fail { "FAILED" } else { "ok" }, u32::from(fail), rng.below(9), rng.below(100));
        }
        Tech::Go => {
            while s.len() < target {
                let f = ws.func(rng);
                let ok = !(fail && rng.chance(0.04));
                let _ = write!(
                    s,
                    "=== RUN   Test{f}\n--- {}: Test{f} (0.{:02}s)\n",
                    if ok { "PASS" } else { "FAIL" },
                    rng.below(100)
                );
                if !ok {
                    let _ = writeln!(
                        s,
                        "    {}:{}: expected {}, got {}",
                        ws.test(rng),
                        rng.range(10, 300),
                        rng.below(9),
                        rng.below(9)
                    );
                }
                if rng.chance(0.1) {
                    let _ = writeln!(
                        s,
                        "ok  \t{}/internal/{}\t0.{:03}s",
                        ws.name,
                        slots.fill("{m}", rng),
                        rng.below(1000)
                    );
                }
            }
            let _ = write!(s, "{}", if fail { "FAIL" } else { "PASS" });
        }
    }
    s
}

/// A long-running dev command of the workspace and `lines` lines of its recent output.
pub fn dev_server(ws: &Workspace, rng: &mut Rng, lines: usize) -> (String, String) {
    let cmd = match ws.tech {
        Tech::Python => "uvicorn app.main:app --reload".to_string(),
        Tech::TypeScript => "npm run dev".to_string(),
        Tech::Rust => "cargo watch -x run".to_string(),
        Tech::Go => format!("go run ./cmd/{}", ws.name),
    };
    let mut out = String::with_capacity(lines * 80);
    let mut clock = rng.range(8 * 3600, 18 * 3600);
    for _ in 0..lines {
        clock += rng.range(1, 90);
        let k = rng.pick(NOUNS);
        let n = rng.range(1, 900);
        match ws.tech {
            Tech::Python => {
                let _ = writeln!(
                    out,
                    "INFO:     127.0.0.1:{} - \"GET /api/{k}s?page={} HTTP/1.1\" 200 OK",
                    rng.range(40_000, 65_000),
                    rng.below(20)
                );
            }
            Tech::TypeScript => {
                let _ = writeln!(
                    out,
                    "{}:{:02}:{:02} [vite] hmr update /src/{}.ts (x{n})",
                    clock / 3600,
                    clock / 60 % 60,
                    clock % 60,
                    rng.pick(&ws.modules)
                );
            }
            Tech::Rust => {
                let _ = writeln!(
                    out,
                    "  INFO {}::{}: processed {n} {k}s in {}ms",
                    ws.name.replace('-', "_"),
                    rng.pick(&ws.modules),
                    rng.range(1, 400)
                );
            }
            Tech::Go => {
                let _ = writeln!(
                    out,
                    "level=INFO msg=request method=GET path=/{k}s status=200 duration={n}ms"
                );
            }
        }
    }
    (cmd, out)
}
