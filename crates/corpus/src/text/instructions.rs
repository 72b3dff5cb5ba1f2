//! What the user and the tasks write: instructions (root and subtask) with their detail sentences,
//! completion results, follow-up questions and todo items.

use super::prose::markdown;
use super::{Lang, Slots};
use crate::rng::Rng;

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
fn user_details(lang: Lang, slots: &Slots, rng: &mut Rng, n: usize) -> String {
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
