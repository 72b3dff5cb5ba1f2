//! Assistant prose, reasoning and long markdown texts (plans, analyses, summaries).

use std::fmt::Write as _;

use super::{Lang, Slots};
use crate::rng::Rng;

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
