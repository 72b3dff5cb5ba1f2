//! Vocabularies and generators for plausible developer conversations (English and French): workspaces and
//! their file trees, instructions, assistant prose, reasoning, code, diffs, command output.

use std::fmt::Write as _;

use crate::rng::Rng;
use crate::time::{Zone, ZONES};

/// Conversation language.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    En,
    Fr,
}

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

const VERBS: &[&str] = &[
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

const NOUNS: &[&str] = &[
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

fn pascal(n: &str) -> String {
    let mut cs = n.chars();
    match cs.next() {
        Some(c) => c.to_uppercase().chain(cs).collect(),
        None => String::new(),
    }
}

impl Workspace {
    fn ext(&self) -> &'static str {
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

    fn lib(&self, rng: &mut Rng) -> &'static str {
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

/// Per-call slot filler: replaces `{X}` placeholders with workspace-aware values.
pub struct Slots<'a> {
    pub ws: &'a Workspace,
}

impl Slots<'_> {
    fn slot(&self, key: &str, rng: &mut Rng, out: &mut String) {
        let ws = self.ws;
        match key {
            "F" => out.push_str(&ws.source(rng)),
            "T" => out.push_str(&ws.test(rng)),
            "f" | "g" => out.push_str(&ws.func(rng)),
            "m" => out.push_str(rng.pick(&ws.modules)),
            "n" => {
                let _ = write!(out, "{}", rng.range(2, 400));
            }
            "N" => {
                let _ = write!(out, "{}", rng.range(100, 99_999));
            }
            "k" => out.push_str(rng.pick(NOUNS)),
            "v" => out.push_str(rng.pick(VERBS)),
            "E" => {
                out.push_str(&pascal(rng.pick(NOUNS)));
                out.push_str("Error");
            }
            "C" => out.push_str(&pascal(rng.pick(NOUNS))),
            "lib" => out.push_str(ws.lib(rng)),
            "cmd" => out.push_str(ws.test_cmd()),
            "w" => out.push_str(&ws.name),
            "ext" => out.push_str(ws.ext()),
            _ => {
                out.push('{');
                out.push_str(key);
                out.push('}');
            }
        }
    }

    /// Appends `template` with its placeholders filled.
    pub fn fill_into(&self, template: &str, rng: &mut Rng, out: &mut String) {
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let after = &rest[open + 1..];
            match after.find('}') {
                Some(close) if close <= 4 => {
                    self.slot(&after[..close], rng, out);
                    rest = &after[close + 1..];
                }
                _ => {
                    out.push('{');
                    rest = after;
                }
            }
        }
        out.push_str(rest);
    }

    pub fn fill(&self, template: &str, rng: &mut Rng) -> String {
        let mut s = String::with_capacity(template.len() + 32);
        self.fill_into(template, rng, &mut s);
        s
    }
}

// ---------------------------------------------------------------------------------------------------------
// Prose banks

const EN_PROSE: &[&str] = &[
    "I'll start by reading {F} to see how {f}() is wired.",
    "The failure comes from {f}(): it assumes the input is already normalised, which is no longer true since the {m} refactoring.",
    "Let me run the test suite to confirm the fix before going further.",
    "{F} now delegates to {f}() and keeps the public signature unchanged.",
    "Next, I need to check the callers of {f}() in the {m} module.",
    "The diff is small: one guard clause and an early return in {f}().",
    "Good, the tests pass. I'll also update the README section about {m}.",
    "There are {n} call sites; only two of them pass a custom timeout.",
    "I'm going to search the codebase for other uses of {f}() before changing its behaviour.",
    "This confirms the hypothesis: {g}() is called twice when the cache is cold.",
    "The configuration is loaded in {F}, but the default value is overridden later in {g}().",
    "I'll split the change in two steps so that each one can be reviewed on its own.",
    "The linter complains about an unused import in {F}; I'll remove it.",
    "Now that {f}() is covered, the remaining failure is unrelated: it's a flaky network test.",
    "The error message is misleading; the real problem is a missing await in {g}().",
    "I'll keep the old function as a thin wrapper so that existing scripts keep working.",
    "The benchmark shows {f}() went from {n} ms to a few milliseconds on the sample data.",
    "Before editing, let me look at how the tests build their fixtures.",
    "The migration needs a default value for existing rows, otherwise the NOT NULL constraint fails.",
    "I've added a regression test that reproduces the original bug report.",
    "{lib} is only used in {F}, so replacing it is low-risk.",
    "The stack trace points at line {n} of {F}, inside {f}().",
    "I'll read {T} first to understand what behaviour the tests expect.",
    "The {k} field can be missing in old records, so {f}() must tolerate it.",
    "That explains the {E}: the {k} is parsed before the defaults are applied.",
    "All {n} tests pass now, including the new ones for {f}().",
    "I'll make the timeout configurable instead of hard-coding it in {F}.",
    "Let me list the files in the {m} package to find where the {k} is built.",
    "The previous attempt failed because the fixture still pointed at the old path.",
    "I'll apply the same change to {g}(), which has the same off-by-one error.",
];

const FR_PROSE: &[&str] = &[
    "Je commence par lire {F} pour voir comment {f}() est branché.",
    "L'échec vient de {f}() : elle suppose que l'entrée est déjà normalisée, ce qui n'est plus vrai depuis le refactoring de {m}.",
    "Je lance la suite de tests pour confirmer la correction avant d'aller plus loin.",
    "{F} délègue maintenant à {f}() et garde la même signature publique.",
    "Il faut ensuite vérifier les appelants de {f}() dans le module {m}.",
    "Le diff est petit : une clause de garde et un retour anticipé dans {f}().",
    "Parfait, les tests passent. Je mets aussi à jour la section du README sur {m}.",
    "Il y a {n} appels ; seuls deux d'entre eux passent un délai personnalisé.",
    "Je cherche d'abord les autres usages de {f}() dans le code avant d'en changer le comportement.",
    "Cela confirme l'hypothèse : {g}() est appelée deux fois quand le cache est froid.",
    "La configuration est chargée dans {F}, mais la valeur par défaut est écrasée plus loin dans {g}().",
    "Je découpe le changement en deux étapes pour que chacune puisse être relue séparément.",
    "Le linter signale un import inutilisé dans {F} ; je le supprime.",
    "Maintenant que {f}() est couverte, l'échec restant n'a rien à voir : c'est un test réseau instable.",
    "Le message d'erreur est trompeur : le vrai problème est un await manquant dans {g}().",
    "Je garde l'ancienne fonction comme simple façade pour que les scripts existants continuent de marcher.",
    "Le benchmark montre que {f}() passe de {n} ms à quelques millisecondes sur les données d'exemple.",
    "Avant de modifier quoi que ce soit, je regarde comment les tests construisent leurs fixtures.",
    "La migration a besoin d'une valeur par défaut pour les lignes existantes, sinon la contrainte NOT NULL échoue.",
    "J'ai ajouté un test de non-régression qui reproduit le bug signalé.",
    "{lib} n'est utilisé que dans {F}, donc le remplacer est peu risqué.",
    "La pile d'appels pointe sur la ligne {n} de {F}, dans {f}().",
    "Je lis d'abord {T} pour comprendre le comportement attendu par les tests.",
    "Le champ {k} peut manquer dans les anciens enregistrements, donc {f}() doit le tolérer.",
    "Voilà qui explique la {E} : le {k} est lu avant que les valeurs par défaut soient appliquées.",
    "Les {n} tests passent maintenant, y compris les nouveaux pour {f}().",
    "Je rends le délai configurable au lieu de le coder en dur dans {F}.",
    "Je liste les fichiers du package {m} pour trouver où le {k} est construit.",
    "La tentative précédente a échoué parce que la fixture pointait encore vers l'ancien chemin.",
    "J'applique la même correction à {g}(), qui a la même erreur de décalage d'un.",
];

const EN_REASONING: &[&str] = &[
    "The user wants {f}() fixed without changing its signature. I should read {F} first.",
    "The test failure mentions {E}; that is raised in {g}() when the {k} is empty.",
    "Two options: patch {f}() locally or move the validation into {m}. The local patch is smaller.",
    "I need to check whether {lib} is still required after this change.",
    "The previous command output shows {n} failures, all in {T}.",
    "The change is self-contained; running `{cmd}` afterwards should be enough to validate it.",
    "The env details show {F} open; the user is probably looking at the same function.",
    "The summary should list the changed files and the test result.",
    "Careful: {g}() is also used by the CLI, so the default must stay backwards compatible.",
    "Reading the whole file is cheaper than guessing the line numbers for the diff.",
];

const FR_REASONING: &[&str] = &[
    "L'utilisateur veut corriger {f}() sans changer sa signature. Je dois d'abord lire {F}.",
    "L'échec du test mentionne {E} ; elle est levée dans {g}() quand le {k} est vide.",
    "Deux options : corriger {f}() localement ou déplacer la validation dans {m}. Le correctif local est plus petit.",
    "Je dois vérifier si {lib} est encore nécessaire après ce changement.",
    "La sortie de la commande précédente montre {n} échecs, tous dans {T}.",
    "La modification est autonome ; lancer `{cmd}` ensuite devrait suffire pour la valider.",
    "Les détails d'environnement montrent {F} ouvert ; l'utilisateur regarde sans doute la même fonction.",
    "Le résumé doit lister les fichiers modifiés et le résultat des tests.",
    "Attention : {g}() est aussi utilisée par la CLI, la valeur par défaut doit rester compatible.",
    "Lire le fichier entier coûte moins cher que deviner les numéros de ligne pour le diff.",
];

const EN_USER: &[&str] = &[
    "It started after the {m} refactoring last week.",
    "The error only shows up with more than {n} entries.",
    "We can't change the {f}() signature, other teams call it.",
    "CI runs `{cmd}` on Ubuntu; locally I'm on macOS.",
    "{lib} is pinned in the lockfile, I'd rather not upgrade it now.",
    "Please keep the diff small, this goes into a patch release.",
    "The logs show a {E} right before the crash.",
    "See {F}, that's where I think the problem is.",
    "Performance matters here: the job processes about {n}k records per night.",
    "Don't touch {F}, it's generated.",
];
const FR_USER: &[&str] = &[
    "Ça a commencé après le refactoring de {m} la semaine dernière.",
    "L'erreur n'apparaît qu'au-delà de {n} entrées.",
    "On ne peut pas changer la signature de {f}(), d'autres équipes l'appellent.",
    "La CI lance `{cmd}` sous Ubuntu ; en local je suis sous Windows.",
    "{lib} est figé dans le lockfile, je préfère ne pas le mettre à jour maintenant.",
    "Garde un diff minimal, ça part dans une version corrective.",
    "Les logs montrent une {E} juste avant le plantage.",
    "Regarde {F}, c'est là que je soupçonne le problème.",
    "Les performances comptent : le job traite environ {n} 000 enregistrements par nuit.",
    "Ne touche pas à {F}, il est généré.",
];
const EN_DONE: &[&str] = &[
    "{f}() now validates the {k} before using it",
    "extracted {g}() from {f}()",
    "added {n} tests",
    "removed the dead {k} branch",
    "the timeout is configurable (default {n} s)",
    "documented the new behaviour",
];
const FR_DONE: &[&str] = &[
    "{f}() valide maintenant le {k} avant de l'utiliser",
    "extraction de {g}() depuis {f}()",
    "{n} tests ajoutés",
    "suppression de la branche morte sur le {k}",
    "délai configurable (défaut {n} s)",
    "nouveau comportement documenté",
];

/// User-written detail sentences (instructions).
pub fn user_details(lang: Lang, slots: &Slots, rng: &mut Rng, n: usize) -> String {
    let bank = if lang == Lang::Fr { FR_USER } else { EN_USER };
    let mut s = String::new();
    for i in 0..n.max(1) {
        if i > 0 {
            s.push(' ');
        }
        slots.fill_into(rng.pick(bank), rng, &mut s);
    }
    s
}

const EN_HEADINGS: &[&str] = &[
    "## Analysis",
    "## Plan",
    "## Findings",
    "## Root cause",
    "## Changes",
    "## Next steps",
    "### Risks",
    "### Open questions",
    "## Test results",
    "## Context",
];
const FR_HEADINGS: &[&str] = &[
    "## Analyse",
    "## Plan",
    "## Constats",
    "## Cause racine",
    "## Modifications",
    "## Prochaines étapes",
    "### Risques",
    "### Questions ouvertes",
    "## Résultats des tests",
    "## Contexte",
];

/// One to `n` sentences of assistant prose.
pub fn prose(lang: Lang, slots: &Slots, rng: &mut Rng, n: usize) -> String {
    let bank = if lang == Lang::Fr { FR_PROSE } else { EN_PROSE };
    let mut s = String::new();
    for i in 0..n.max(1) {
        if i > 0 {
            s.push(' ');
        }
        slots.fill_into(rng.pick(bank), rng, &mut s);
    }
    s
}

/// Reasoning text of about `n` sentences.
pub fn reasoning(lang: Lang, slots: &Slots, rng: &mut Rng, n: usize) -> String {
    let bank = if lang == Lang::Fr {
        FR_REASONING
    } else {
        EN_REASONING
    };
    let mut s = String::new();
    for i in 0..n.max(1) {
        if i > 0 {
            s.push_str(if rng.chance(0.3) { "\n\n" } else { " " });
        }
        slots.fill_into(rng.pick(bank), rng, &mut s);
    }
    s
}

/// A long markdown text (plans, analyses, summaries) of roughly `target` bytes.
pub fn markdown(lang: Lang, slots: &Slots, rng: &mut Rng, target: usize) -> String {
    let (heads, bank) = if lang == Lang::Fr {
        (FR_HEADINGS, FR_PROSE)
    } else {
        (EN_HEADINGS, EN_PROSE)
    };
    let mut s = String::with_capacity(target + 256);
    while s.len() < target {
        if !s.is_empty() {
            s.push_str("\n\n");
        }
        s.push_str(rng.pick(heads));
        s.push_str("\n\n");
        let paras = rng.between(1, 2);
        for p in 0..paras {
            if p > 0 {
                s.push_str("\n\n");
            }
            let k = rng.between(2, 5);
            for i in 0..k {
                if i > 0 {
                    s.push(' ');
                }
                slots.fill_into(rng.pick(bank), rng, &mut s);
            }
        }
        if rng.chance(0.6) {
            s.push_str("\n\n");
            for i in 0..rng.between(2, 6) {
                if rng.chance(0.3) {
                    let _ = write!(s, "{}. ", i + 1);
                } else {
                    s.push_str("- ");
                }
                slots.fill_into(rng.pick(bank), rng, &mut s);
                s.push('\n');
            }
        }
    }
    s
}

// ---------------------------------------------------------------------------------------------------------
// Instructions and results

const EN_CHILD_HEAD: &[&str] = &[
    "Implement {f}() in {F} (ticket #{N}).",
    "Fix the failing test in {T} around {f}() (ticket #{N}).",
    "Refactor {F}: extract {f}() and {g}() into a new {m}_helpers module (ticket #{N}).",
    "Add a --{k}-{n} option to the {w} CLI, handled in {F} (ticket #{N}).",
    "Investigate why {f}() is slow on large inputs in {F} (ticket #{N}).",
    "Write unit tests for {f}() and {g}() in {T} (ticket #{N}).",
    "Document the {m} module and its {f}() entry point in README.md (ticket #{N}).",
    "Replace {lib} with a small local implementation in {F} (ticket #{N}).",
    "Make {f}() in {F} retry {n} times with backoff on transient errors (ticket #{N}).",
    "Migrate {F} from the old {k} format to the new one, keeping {g}() compatible (ticket #{N}).",
    "Review {F} and list the places where {E} can escape unhandled (ticket #{N}).",
    "Debug the {E} raised by {f}() when the {k} is empty (ticket #{N}).",
];
const FR_CHILD_HEAD: &[&str] = &[
    "Implémente {f}() dans {F} (ticket #{N}).",
    "Corrige le test qui échoue dans {T} autour de {f}() (ticket #{N}).",
    "Refactore {F} : extrais {f}() et {g}() dans un nouveau module {m}_helpers (ticket #{N}).",
    "Ajoute une option --{k}-{n} à la CLI {w}, gérée dans {F} (ticket #{N}).",
    "Cherche pourquoi {f}() est lente sur de grosses entrées dans {F} (ticket #{N}).",
    "Écris des tests unitaires pour {f}() et {g}() dans {T} (ticket #{N}).",
    "Documente le module {m} et son point d'entrée {f}() dans le README.md (ticket #{N}).",
    "Remplace {lib} par une petite implémentation locale dans {F} (ticket #{N}).",
    "Fais en sorte que {f}() dans {F} réessaie {n} fois avec backoff sur les erreurs transitoires (ticket #{N}).",
    "Migre {F} de l'ancien format de {k} vers le nouveau, en gardant {g}() compatible (ticket #{N}).",
    "Relis {F} et liste les endroits où une {E} peut s'échapper sans être gérée (ticket #{N}).",
    "Débogue la {E} levée par {f}() quand le {k} est vide (ticket #{N}).",
];
const EN_BULLETS: &[&str] = &[
    "keep the {f}() signature unchanged;",
    "add a regression test in {T};",
    "run `{cmd}` and fix what breaks;",
    "do not touch {F};",
    "log at debug level only, never print;",
    "handle the empty {k} case explicitly;",
    "keep {lib} out of the public API;",
    "update the docstring of {g}();",
    "the default timeout stays at {n} seconds;",
    "mention the change in docs/changelog.md.",
];
const FR_BULLETS: &[&str] = &[
    "garde la signature de {f}() inchangée ;",
    "ajoute un test de non-régression dans {T} ;",
    "lance `{cmd}` et corrige ce qui casse ;",
    "ne touche pas à {F} ;",
    "journalise en debug uniquement, jamais de print ;",
    "gère explicitement le cas du {k} vide ;",
    "garde {lib} hors de l'API publique ;",
    "mets à jour la docstring de {g}() ;",
    "le délai par défaut reste à {n} secondes ;",
    "mentionne le changement dans docs/changelog.md.",
];
const EN_CLOSE: &[&str] = &[
    "Finish with attempt_completion summarising the changed files.",
    "When done, use attempt_completion with a short summary and the test result.",
    "Only do this subtask; report back with attempt_completion.",
];
const FR_CLOSE: &[&str] = &[
    "Termine avec attempt_completion en listant les fichiers modifiés.",
    "Quand c'est fini, utilise attempt_completion avec un court résumé et le résultat des tests.",
    "Ne fais que cette sous-tâche ; rends compte avec attempt_completion.",
];

/// The instruction of a subtask (the `message` of `new_task`).
pub fn child_instruction(lang: Lang, slots: &Slots, rng: &mut Rng) -> String {
    let (heads, bullets, close) = if lang == Lang::Fr {
        (FR_CHILD_HEAD, FR_BULLETS, FR_CLOSE)
    } else {
        (EN_CHILD_HEAD, EN_BULLETS, EN_CLOSE)
    };
    let mut s = slots.fill(rng.pick(heads), rng);
    let nb = rng.between(0, 5);
    if nb > 0 {
        s.push_str("\n\n");
        for _ in 0..nb {
            s.push_str("- ");
            slots.fill_into(rng.pick(bullets), rng, &mut s);
            s.push('\n');
        }
        s.push('\n');
    } else {
        s.push(' ');
    }
    s.push_str(rng.pick(close));
    s
}

const EN_ROOT: &[&str] = &[
    "The build fails with \"{E}: invalid {k}\" when running `{cmd}` on CI, but it works locally. Can you find out why? (#{N})",
    "Add a --dry-run option to {F}: it should only list what {f}() would change, without writing anything. (#{N})",
    "{f}() in {F} is very slow since last week's {m} change, please investigate and fix it. (#{N})",
    "Write the missing tests for the {m} module; coverage of {F} is below {n}%. (#{N})",
    "Explain how {f}() and {g}() interact in {F}; I need to change the {k} handling next week. (#{N})",
    "Upgrade {lib} to the latest major version in {w} and fix the breaking changes. (#{N})",
    "Users report a {E} when the {k} contains non-ASCII characters; reproduce it and fix it. (#{N})",
    "Clean up {F}: dead code, unused imports, and the duplicated {f}() logic. (#{N})",
];
const FR_ROOT: &[&str] = &[
    "Le build plante avec « {E}: invalid {k} » quand on lance `{cmd}` en CI, alors que ça marche en local. Tu peux trouver pourquoi ? (#{N})",
    "Ajoute une option --dry-run à {F} : elle doit seulement lister ce que {f}() changerait, sans rien écrire. (#{N})",
    "{f}() dans {F} est très lente depuis le changement de {m} la semaine dernière, enquête et corrige. (#{N})",
    "Écris les tests manquants pour le module {m} ; la couverture de {F} est sous les {n} %. (#{N})",
    "Explique comment {f}() et {g}() interagissent dans {F} ; je dois modifier la gestion du {k} la semaine prochaine. (#{N})",
    "Passe {lib} à la dernière version majeure dans {w} et corrige les changements cassants. (#{N})",
    "Des utilisateurs signalent une {E} quand le {k} contient des caractères non ASCII ; reproduis et corrige. (#{N})",
    "Fais le ménage dans {F} : code mort, imports inutilisés et logique dupliquée de {f}(). (#{N})",
];
const EN_ORCH: &[&str] = &[
    "# {m} overhaul for {w} (#{N})\n\n## Context\n",
    "# Mission: stabilise the {m} pipeline (#{N})\n\n## Context\n",
    "Plan and coordinate the migration of {w} from {lib} to an in-house {m} layer (#{N}).\n\n## Context\n",
];
const FR_ORCH: &[&str] = &[
    "# Refonte de {m} pour {w} (#{N})\n\n## Contexte\n",
    "# MISSION : stabiliser la chaîne {m} (#{N})\n\n## Contexte\n",
    "Planifie et coordonne la migration de {w} de {lib} vers une couche {m} maison (#{N}).\n\n## Contexte\n",
];

/// The first message of a top-level task. Orchestrator roots get long, structured instructions.
pub fn root_instruction(lang: Lang, slots: &Slots, rng: &mut Rng, orchestrator: bool) -> String {
    if !orchestrator {
        let bank = if lang == Lang::Fr { FR_ROOT } else { EN_ROOT };
        let mut s = slots.fill(rng.pick(bank), rng);
        if rng.chance(0.6) {
            s.push_str("\n\n");
            let n = rng.between(1, 3);
            s.push_str(&user_details(lang, slots, rng, n));
        }
        return s;
    }
    let (heads, bullets) = if lang == Lang::Fr {
        (FR_ORCH, FR_BULLETS)
    } else {
        (EN_ORCH, EN_BULLETS)
    };
    let mut s = slots.fill(rng.pick(heads), rng);
    let n = rng.between(2, 5);
    s.push_str(&user_details(lang, slots, rng, n));
    s.push_str(if lang == Lang::Fr {
        "\n\n## Contraintes\n"
    } else {
        "\n\n## Constraints\n"
    });
    for _ in 0..rng.between(2, 6) {
        s.push_str("- ");
        slots.fill_into(rng.pick(bullets), rng, &mut s);
        s.push('\n');
    }
    s.push_str(if lang == Lang::Fr {
        "\nDécoupe ce travail en sous-tâches et délègue-les aux modes adaptés."
    } else {
        "\nBreak this down into subtasks and delegate them to the right modes."
    });
    if rng.chance(0.4) {
        s.push_str("\n\n");
        let n = rng.between(300, 2500);
        s.push_str(&markdown(lang, slots, rng, n));
    }
    s
}

const EN_RESULT: &[&str] = &[
    "{F} updated: {f}() now handles the empty {k} case and keeps its signature. {n} tests pass.",
    "Done. {f}() was moved to {m}_helpers, {g}() delegates to it; `{cmd}` is green.",
    "The {E} came from {g}() parsing the {k} before the defaults were applied. Fixed in {F}, regression test added in {T}.",
    "Added the option and its tests; README.md documents it. {n} passed, 0 failed.",
    "Analysis written to docs/architecture.md: {f}() is the only entry point that needs changing.",
];
const FR_RESULT: &[&str] = &[
    "{F} mis à jour : {f}() gère le cas du {k} vide et garde sa signature. {n} tests passent.",
    "Fait. {f}() a été déplacée dans {m}_helpers, {g}() y délègue ; `{cmd}` est vert.",
    "La {E} venait de {g}() qui lisait le {k} avant d'appliquer les valeurs par défaut. Corrigé dans {F}, test de non-régression ajouté dans {T}.",
    "Option ajoutée avec ses tests ; le README.md la documente. {n} passés, 0 échec.",
    "Analyse écrite dans docs/architecture.md : {f}() est le seul point d'entrée à modifier.",
];

/// A completion result (also the parent's `subtask_result`).
pub fn result_text(lang: Lang, slots: &Slots, rng: &mut Rng) -> String {
    let bank = if lang == Lang::Fr {
        FR_RESULT
    } else {
        EN_RESULT
    };
    let mut s = slots.fill(rng.pick(bank), rng);
    if rng.chance(0.5) {
        s.push('\n');
        let done = if lang == Lang::Fr { FR_DONE } else { EN_DONE };
        for _ in 0..rng.between(2, 4) {
            s.push_str("\n- ");
            slots.fill_into("{F}", rng, &mut s);
            s.push_str(if lang == Lang::Fr { " : " } else { ": " });
            slots.fill_into(rng.pick(done), rng, &mut s);
        }
    }
    s
}

const EN_QUESTIONS: &[&str] = &[
    "Should {f}() keep accepting the legacy {k} format?",
    "Which default should the timeout use: {n} seconds or no timeout?",
    "Do you want the change behind a feature flag?",
];
const FR_QUESTIONS: &[&str] = &[
    "Est-ce que {f}() doit continuer d'accepter l'ancien format de {k} ?",
    "Quelle valeur par défaut pour le délai : {n} secondes ou pas de délai ?",
    "Veux-tu que le changement soit derrière un feature flag ?",
];

/// A follow-up question with two suggestions; returns (question, suggestions).
pub fn question(lang: Lang, slots: &Slots, rng: &mut Rng) -> (String, Vec<String>) {
    let bank = if lang == Lang::Fr {
        FR_QUESTIONS
    } else {
        EN_QUESTIONS
    };
    let q = slots.fill(rng.pick(bank), rng);
    let s = if lang == Lang::Fr {
        vec![
            slots.fill("Oui, garde la compatibilité ({n} appels)", rng),
            "Non, on casse proprement".to_string(),
        ]
    } else {
        vec![
            slots.fill("Yes, keep it compatible ({n} callers)", rng),
            "No, make a clean break".to_string(),
        ]
    };
    (q, s)
}

const EN_TODOS: &[&str] = &[
    "Read {F}",
    "Fix {f}()",
    "Add tests in {T}",
    "Run {cmd}",
    "Update README.md",
    "Delegate the {m} change",
    "Review the result",
    "Check the callers of {g}()",
];
const FR_TODOS: &[&str] = &[
    "Lire {F}",
    "Corriger {f}()",
    "Ajouter des tests dans {T}",
    "Lancer {cmd}",
    "Mettre à jour le README.md",
    "Déléguer le changement de {m}",
    "Relire le résultat",
    "Vérifier les appelants de {g}()",
];

/// 2–5 todo items.
pub fn todos(lang: Lang, slots: &Slots, rng: &mut Rng) -> Vec<String> {
    let bank = if lang == Lang::Fr { FR_TODOS } else { EN_TODOS };
    (0..rng.between(2, 5))
        .map(|_| slots.fill(rng.pick(bank), rng))
        .collect()
}

// ---------------------------------------------------------------------------------------------------------
// Code, diffs, command output

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
