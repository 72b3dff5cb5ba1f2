//! Synthetic project folders: names, technology, paths, time zone, file tree, and the identifiers their
//! conversations mention.

use super::Lang;
use crate::rng::Rng;
use crate::time::{Zone, ZONES};

/// Main technology of a workspace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tech {
    Python,
    TypeScript,
    Rust,
    Go,
}

/// A synthetic project folder.
#[derive(Clone, Debug)]
pub struct Workspace {
    pub name: String,
    /// Native path as stored in `HistoryItem.workspace`.
    pub native: String,
    /// POSIX form used in environment details.
    pub posix: String,
    pub lang: Lang,
    pub tech: Tech,
    pub zone: Zone,
    /// Workspace listing (directories end with `/`).
    pub files: Vec<String>,
    pub sources: Vec<String>,
    pub tests: Vec<String>,
    pub modules: Vec<&'static str>,
}

const NAMES: &[&str] = &[
    "notes-api",
    "meteo-cli",
    "linkcheck",
    "photo-backup",
    "site-vitrine",
    "legacy-app",
    "invoice-service",
    "mcp-servers",
    "dashboard-web",
    "data-pipeline",
    "chess-engine",
    "blog-engine",
    "intelligence-symbolique",
    "inventory-sync",
    "auth-gateway",
    "ml-notebooks",
    "trading-bot",
    "wiki-search",
    "payroll-batch",
    "iot-gateway",
    "cookbook-app",
    "devops-scripts",
    "roo-extensions",
    "planning-equipes",
];

const MODULES: &[&str] = &[
    "config",
    "db",
    "models",
    "routes",
    "cli",
    "api",
    "cache",
    "utils",
    "auth",
    "jobs",
    "storage",
    "parser",
    "scheduler",
    "reports",
    "export",
    "search",
    "metrics",
    "notifications",
    "billing",
    "users",
    "sessions",
    "retry",
    "http",
    "validation",
    "format",
    "importer",
    "pipeline",
    "queue",
    "settings",
    "history",
];

pub(super) const VERBS: &[&str] = &[
    "load",
    "parse",
    "fetch",
    "save",
    "validate",
    "build",
    "render",
    "compute",
    "sync",
    "export",
    "import",
    "resolve",
    "normalize",
    "merge",
    "schedule",
    "retry",
    "refresh",
    "index",
    "search",
    "format",
    "encode",
    "decode",
    "flush",
    "prune",
    "reconcile",
];

pub(super) const NOUNS: &[&str] = &[
    "config", "settings", "user", "invoice", "report", "forecast", "session", "token", "record",
    "batch", "query", "payload", "entry", "task", "snapshot", "event", "message", "order",
    "account", "metric", "window", "chunk", "header", "profile", "schedule",
];

const LIBS_PY: &[&str] = &[
    "requests",
    "psycopg",
    "sqlalchemy",
    "pydantic",
    "click",
    "httpx",
    "pandas",
    "pytest",
];
const LIBS_TS: &[&str] = &[
    "axios",
    "zod",
    "express",
    "vitest",
    "react-query",
    "date-fns",
    "prisma",
    "fastify",
];
const LIBS_RS: &[&str] = &[
    "serde",
    "tokio",
    "reqwest",
    "clap",
    "rayon",
    "thiserror",
    "tracing",
    "sqlx",
];
const LIBS_GO: &[&str] = &[
    "cobra", "zap", "pgx", "chi", "testify", "viper", "errgroup", "sqlc",
];

fn snake(v: &str, n: &str) -> String {
    format!("{v}_{n}")
}

fn camel(v: &str, n: &str) -> String {
    let mut s = String::with_capacity(v.len() + n.len());
    s.push_str(v);
    let mut cs = n.chars();
    if let Some(c) = cs.next() {
        s.extend(c.to_uppercase());
        s.push_str(cs.as_str());
    }
    s
}

pub(super) fn pascal(n: &str) -> String {
    let mut cs = n.chars();
    match cs.next() {
        Some(c) => c.to_uppercase().chain(cs).collect(),
        None => String::new(),
    }
}

impl Workspace {
    pub(super) fn ext(&self) -> &'static str {
        match self.tech {
            Tech::Python => "py",
            Tech::TypeScript => "ts",
            Tech::Rust => "rs",
            Tech::Go => "go",
        }
    }

    /// A function identifier in the workspace's naming style.
    pub fn func(&self, rng: &mut Rng) -> String {
        let v = rng.pick(VERBS);
        let n = rng.pick(NOUNS);
        match self.tech {
            Tech::Python | Tech::Rust => snake(v, n),
            Tech::TypeScript => camel(v, n),
            Tech::Go => pascal(&camel(v, n)),
        }
    }

    pub(super) fn lib(&self, rng: &mut Rng) -> &'static str {
        match self.tech {
            Tech::Python => rng.pick(LIBS_PY),
            Tech::TypeScript => rng.pick(LIBS_TS),
            Tech::Rust => rng.pick(LIBS_RS),
            Tech::Go => rng.pick(LIBS_GO),
        }
    }

    /// The test command of the workspace.
    pub fn test_cmd(&self) -> &'static str {
        match self.tech {
            Tech::Python => "pytest -q",
            Tech::TypeScript => "npm test",
            Tech::Rust => "cargo test",
            Tech::Go => "go test ./...",
        }
    }

    pub fn source(&self, rng: &mut Rng) -> String {
        rng.pick_ref(&self.sources).clone()
    }

    pub fn test(&self, rng: &mut Rng) -> String {
        rng.pick_ref(&self.tests).clone()
    }
}

/// Builds `n` workspaces.
pub fn make_workspaces(n: usize, rng: &mut Rng) -> Vec<Workspace> {
    (0..n.max(1))
        .map(|i| {
            let base = NAMES[i % NAMES.len()];
            let name = if i < NAMES.len() {
                base.to_string()
            } else {
                format!("{base}-{}", i / NAMES.len() + 1)
            };
            let style = rng.below(5);
            let (native, posix, lang, zone) = match style {
                0 => {
                    let p = format!("/home/dev/projects/{name}");
                    (p.clone(), p, Lang::En, rng.pick(&ZONES[1..]))
                }
                1 => {
                    let p = format!("/home/dev/projets/{name}");
                    (p.clone(), p, Lang::Fr, ZONES[0])
                }
                2 => {
                    let p = format!("/Users/alice/code/{name}");
                    (p.clone(), p, Lang::En, rng.pick(&ZONES[1..]))
                }
                3 => (
                    format!("d:\\dev\\{name}"),
                    format!("d:/dev/{name}"),
                    Lang::Fr,
                    ZONES[0],
                ),
                _ => (
                    format!("c:\\dev\\{name}"),
                    format!("c:/dev/{name}"),
                    Lang::Fr,
                    ZONES[0],
                ),
            };
            let tech = rng.pick(&[
                Tech::Python,
                Tech::TypeScript,
                Tech::Rust,
                Tech::Go,
                Tech::Python,
                Tech::TypeScript,
            ]);
            let nmods = rng.between(6, 24);
            let mut modules: Vec<&'static str> = Vec::with_capacity(nmods);
            while modules.len() < nmods {
                let m = rng.pick(MODULES);
                if !modules.contains(&m) {
                    modules.push(m);
                }
            }
            let (files, sources, tests) = file_tree(&name, tech, &modules, rng);
            Workspace {
                name,
                native,
                posix,
                lang,
                tech,
                zone,
                files,
                sources,
                tests,
                modules,
            }
        })
        .collect()
}

fn file_tree(
    name: &str,
    tech: Tech,
    modules: &[&'static str],
    rng: &mut Rng,
) -> (Vec<String>, Vec<String>, Vec<String>) {
    let mut files = vec![".gitignore".to_string(), "README.md".to_string()];
    let mut sources = Vec::new();
    let mut tests = Vec::new();
    let pkg = name.replace('-', "_");
    match tech {
        Tech::Python => {
            files.push("pyproject.toml".into());
            files.push(format!("{pkg}/"));
            files.push(format!("{pkg}/__init__.py"));
            for m in modules {
                sources.push(format!("{pkg}/{m}.py"));
            }
            files.extend(sources.iter().cloned());
            files.push("tests/".into());
            files.push("tests/conftest.py".into());
            for m in modules.iter().take(modules.len() * 2 / 3) {
                tests.push(format!("tests/test_{m}.py"));
            }
        }
        Tech::TypeScript => {
            files.push("package.json".into());
            files.push("package-lock.json".into());
            files.push("tsconfig.json".into());
            files.push("src/".into());
            files.push("src/index.ts".into());
            for m in modules {
                sources.push(format!("src/{m}.ts"));
            }
            if rng.chance(0.5) {
                for m in modules.iter().take(5) {
                    sources.push(format!("src/components/{}Panel.tsx", pascal(m)));
                }
            }
            files.extend(sources.iter().cloned());
            files.push("tests/".into());
            for m in modules.iter().take(modules.len() * 2 / 3) {
                tests.push(format!("tests/{m}.test.ts"));
            }
        }
        Tech::Rust => {
            files.push("Cargo.toml".into());
            files.push("Cargo.lock".into());
            files.push("src/".into());
            files.push("src/main.rs".into());
            for m in modules {
                sources.push(format!("src/{m}.rs"));
            }
            files.extend(sources.iter().cloned());
            files.push("tests/".into());
            for m in modules.iter().take(modules.len() / 2 + 1) {
                tests.push(format!("tests/{m}.rs"));
            }
        }
        Tech::Go => {
            files.push("go.mod".into());
            files.push("go.sum".into());
            files.push(format!("cmd/{name}/main.go"));
            for m in modules {
                sources.push(format!("internal/{m}/{m}.go"));
            }
            files.extend(sources.iter().cloned());
            for m in modules.iter().take(modules.len() * 2 / 3) {
                tests.push(format!("internal/{m}/{m}_test.go"));
            }
        }
    }
    files.extend(tests.iter().cloned());
    if rng.chance(0.5) {
        files.push("docs/".into());
        for d in ["architecture.md", "deployment.md", "changelog.md", "faq.md"] {
            files.push(format!("docs/{d}"));
        }
    }
    if rng.chance(0.4) {
        files.push(".github/workflows/ci.yml".into());
        files.push("docker-compose.yml".into());
        files.push("Dockerfile".into());
    }
    (files, sources, tests)
}
