//! Filtered, sorted, paged lists of a task store's headers.

use super::views::Fields;
use super::{Lookup, TaskStore};
use rayon::prelude::*;
use roo_state::hierarchy::WorkspaceQuery;
use roo_state::ConversationSkeleton;
use serde::Serialize;
use std::borrow::Cow;

/// A query of [`TaskStore::list`].
#[derive(Debug, Clone, Default)]
pub struct ListQuery {
    /// Only tasks of this workspace: a path (compared after normalisation) or a bare folder name
    /// (the workspace's last folder).
    pub workspace: Option<String>,
    /// Only tasks of this host (a label of `roo_formats::host::SOURCES`).
    pub host: Option<String>,
    /// Only tasks of this mode (the slug, `code`, `orchestrator`, …; compared without case).
    pub mode: Option<String>,
    /// Last activity at or after / before this time (ms since the epoch).
    pub since_ms: Option<i64>,
    pub until_ms: Option<i64>,
    /// Only tasks without a parent.
    pub roots_only: bool,
    /// Only the top tasks of the handle's forest: those without a parent and those whose parent
    /// is not among its tasks (a tree's top nodes).
    pub top_only: bool,
    pub offset: usize,
    pub limit: Option<usize>,
    /// The order of the list (default: last activity).
    pub sort: SortKey,
    /// `None`: the key's natural order (newest, largest first; titles A to Z).
    pub ascending: Option<bool>,
    /// The fields of each item (default: all).
    pub fields: Fields,
}

/// What [`TaskStore::list`] sorts by; ties are broken by task id.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum SortKey {
    #[default]
    LastActivity,
    CreatedAt,
    Title,
    MessageCount,
    ActionCount,
    TotalSize,
    TotalCost,
}

impl SortKey {
    /// The key of a JavaScript name (`lastActivity`, `createdAt`, `title`, `messageCount`,
    /// `actionCount`, `totalSize`, `totalCost`).
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "lastActivity" => SortKey::LastActivity,
            "createdAt" => SortKey::CreatedAt,
            "title" => SortKey::Title,
            "messageCount" => SortKey::MessageCount,
            "actionCount" => SortKey::ActionCount,
            "totalSize" => SortKey::TotalSize,
            "totalCost" => SortKey::TotalCost,
            _ => return None,
        })
    }

    /// Every key.
    pub const ALL: [SortKey; 7] = [
        SortKey::LastActivity,
        SortKey::CreatedAt,
        SortKey::Title,
        SortKey::MessageCount,
        SortKey::ActionCount,
        SortKey::TotalSize,
        SortKey::TotalCost,
    ];

    pub const NAMES: &'static str =
        "lastActivity, createdAt, title, messageCount, actionCount, totalSize or totalCost";

    /// `a` against `b` in the key's natural order.
    fn compare(self, a: &ListKey<'_>, b: &ListKey<'_>) -> std::cmp::Ordering {
        match self {
            SortKey::LastActivity => b.last_activity_ms.cmp(&a.last_activity_ms),
            SortKey::CreatedAt => b.created_at_ms.cmp(&a.created_at_ms),
            SortKey::Title => {
                let title = |k: &ListKey<'_>| k.title.unwrap_or("").to_lowercase();
                title(a).cmp(&title(b))
            }
            SortKey::MessageCount => b.message_count.cmp(&a.message_count),
            SortKey::ActionCount => b.action_count.cmp(&a.action_count),
            SortKey::TotalSize => b.total_size.cmp(&a.total_size),
            SortKey::TotalCost => b.total_cost.total_cmp(&a.total_cost),
        }
    }

    /// The order of task lists: by this key (`ascending: None` is the key's natural order: newest,
    /// largest first, titles A to Z), ties broken by task id. The one rule every list uses: the
    /// handle's `list`, and the CLI merging the lists of several stores (`listOrder` in the
    /// binding).
    pub fn order(
        self,
        ascending: Option<bool>,
        a: &ListKey<'_>,
        b: &ListKey<'_>,
    ) -> std::cmp::Ordering {
        let by_key = self.compare(a, b);
        let by_key = if self.reversed(ascending) {
            by_key.reverse()
        } else {
            by_key
        };
        by_key.then_with(|| a.task_id.cmp(b.task_id))
    }

    /// Whether the natural order is ascending (titles) rather than descending.
    fn natural_ascending(self) -> bool {
        self == SortKey::Title
    }

    /// Whether `ascending` asks for the opposite of the key's natural order.
    fn reversed(self, ascending: Option<bool>) -> bool {
        ascending.is_some_and(|asc| asc != self.natural_ascending())
    }

    /// A numeric key as one integer that grows with it (a missing time below every time, costs
    /// in `f64::total_cmp`'s order); `None` for titles.
    fn rank(self, k: &ListKey<'_>) -> Option<u128> {
        // `None` below `Some(i64::MIN)`: a time made unsigned (order kept), one up.
        let time = |t: Option<i64>| t.map_or(0, |t| u128::from((t as u64) ^ (1 << 63)) + 1);
        Some(match self {
            SortKey::LastActivity => time(k.last_activity_ms),
            SortKey::CreatedAt => time(k.created_at_ms),
            SortKey::Title => return None,
            SortKey::MessageCount => u128::from(k.message_count),
            SortKey::ActionCount => u128::from(k.action_count),
            SortKey::TotalSize => u128::from(k.total_size),
            SortKey::TotalCost => {
                let b = k.total_cost.to_bits();
                u128::from(if b >> 63 == 1 { !b } else { b | (1 << 63) })
            }
        })
    }
}

/// The first eight bytes of an id as a number that sorts as the ids do (an id is never NUL).
fn id_head(id: &str) -> u64 {
    let mut head = [0u8; 8];
    let n = id.len().min(8);
    head[..n].copy_from_slice(&id.as_bytes()[..n]);
    u64::from_be_bytes(head)
}

/// The positions of `skeletons` (in task id order) in the order of `key` ([`SortKey::order`]:
/// ties by task id, which is position order). A numeric key sorts (rank, position) pairs, with
/// no header touched while sorting: at 50 000 tasks a third of the time of the comparisons.
fn sorted_positions(
    skeletons: &[ConversationSkeleton],
    key: SortKey,
    ascending: Option<bool>,
) -> Vec<u32> {
    // Numeric keys are naturally newest or largest first.
    let descending = key.natural_ascending() == key.reversed(ascending);
    let ranked: Option<Vec<(u128, u32)>> = (skeletons.par_iter().enumerate())
        .map(|(i, s)| {
            let r = key.rank(&ListKey::of(s))?;
            Some((if descending { !r } else { r }, i as u32))
        })
        .collect();
    if let Some(mut ranked) = ranked {
        ranked.par_sort_unstable();
        return ranked.into_iter().map(|(_, i)| i).collect();
    }
    let keys: Vec<ListKey<'_>> = skeletons.iter().map(ListKey::of).collect();
    let mut order: Vec<u32> = (0..keys.len() as u32).collect();
    order.par_sort_by(|&a, &b| key.order(ascending, &keys[a as usize], &keys[b as usize]));
    order
}

/// What a list is sorted by, of one task: borrowed from its header, or from a caller's values.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ListKey<'a> {
    pub task_id: &'a str,
    pub last_activity_ms: Option<i64>,
    pub created_at_ms: Option<i64>,
    pub title: Option<&'a str>,
    pub message_count: u32,
    pub action_count: u32,
    pub total_size: u64,
    pub total_cost: f64,
}

impl<'a> ListKey<'a> {
    pub fn of(s: &'a ConversationSkeleton) -> Self {
        ListKey {
            task_id: &s.task_id,
            last_activity_ms: s.last_activity_ms,
            created_at_ms: s.created_at_ms,
            title: s.metadata.title.as_deref(),
            message_count: s.metadata.message_count,
            action_count: s.metadata.action_count,
            total_size: s.metadata.total_size,
            total_cost: s.api_totals.total_cost,
        }
    }
}

/// A page of [`TaskStore::list`] (written as `{ total, offset, items }`, each item with the
/// query's fields).
#[derive(Debug, Clone)]
pub struct ListPage<'a> {
    /// Tasks matching the query, before paging.
    pub total: usize,
    pub offset: usize,
    /// Whole when `fields` include `childTasks` ([`TaskStore::whole`]).
    pub items: Vec<Cow<'a, ConversationSkeleton>>,
    /// The fields `items` are written with.
    pub fields: Fields,
}

impl Serialize for ListPage<'_> {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let items: Vec<_> = self.items.iter().map(|s| self.fields.pick(s)).collect();
        let mut page = ser.serialize_struct("ListPage", 3)?;
        page.serialize_field("total", &self.total)?;
        page.serialize_field("offset", &self.offset)?;
        page.serialize_field("items", &items)?;
        page.end()
    }
}

impl TaskStore {
    /// Whether each task is a top task of the handle's forest: it names no parent (an empty id
    /// names none), or one the handle does not hold, or itself. A parent is looked for first by
    /// the first eight bytes of its id in one array in id order (a few hundred kilobytes), and
    /// among the headers only in the run that shares them: a binary search over the headers
    /// themselves reads a header at each step, most of them out of the processor's caches.
    fn top_flags(&self) -> Vec<bool> {
        let heads: Vec<u64> = self.skeletons.iter().map(|s| id_head(&s.task_id)).collect();
        let holds = |p: &str| {
            let h = id_head(p);
            let (from, to) = (
                heads.partition_point(|&x| x < h),
                heads.partition_point(|&x| x <= h),
            );
            (self.skeletons[from..to].binary_search_by(|s| s.task_id.as_str().cmp(p))).is_ok()
        };
        (self.skeletons.par_iter())
            .map(
                |s| match s.parent_task_id.as_deref().filter(|p| !p.is_empty()) {
                    None => true,
                    Some(p) => p == s.task_id || !holds(p),
                },
            )
            .collect()
    }

    /// Tasks matching `q`, sorted, one page. The order of each sort is kept between calls
    /// (until a refresh changes something): a call filters and pages, it does not sort.
    pub fn list(&self, q: &ListQuery) -> ListPage<'_> {
        let ws = q.workspace.as_deref().map(WorkspaceQuery::new);
        // Which tasks are tops: a lookup of each parent, made once for the handle (a page of
        // 50 000 tasks otherwise pays 15-30 ms for it at every call), on every core.
        let tops = (q.top_only).then(|| self.views.tops(|| self.top_flags()));
        let keep = |i: usize, s: &ConversationSkeleton| {
            ws.as_ref().is_none_or(|w| {
                s.metadata
                    .workspace
                    .as_deref()
                    .is_some_and(|x| w.matches(x))
            }) && q.host.as_deref().is_none_or(|h| s.metadata.source == h)
                && q.mode.as_deref().is_none_or(|m| {
                    s.metadata
                        .mode
                        .as_deref()
                        .is_some_and(|x| x.eq_ignore_ascii_case(m))
                })
                && {
                    let last = s.last_activity_ms.unwrap_or(0);
                    q.since_ms.is_none_or(|t| last >= t) && q.until_ms.is_none_or(|t| last < t)
                }
                && (!q.roots_only || s.parent_task_id.is_none())
                && tops
                    .as_ref()
                    .is_none_or(|t| t.get(i).copied().unwrap_or(false))
        };
        let order = self.views.order(q.sort, q.sort.reversed(q.ascending), || {
            sorted_positions(&self.skeletons, q.sort, q.ascending)
        });
        let limit = q.limit.unwrap_or(usize::MAX);
        let mut total = 0;
        let mut items = Vec::new();
        for &i in order.iter() {
            let Some(s) = self.skeletons.get(i as usize) else {
                continue;
            };
            if keep(i as usize, s) {
                if total >= q.offset && items.len() < limit {
                    items.extend(q.fields.shown(self, i as usize));
                }
                total += 1;
            }
        }
        ListPage {
            total,
            offset: q.offset,
            items,
            fields: q.fields,
        }
    }
}

/// Lookups by id or prefix.
impl TaskStore {
    /// A task by its id, or by a prefix of it that only one id starts with.
    pub fn lookup(&self, id_or_prefix: &str) -> Lookup {
        if id_or_prefix.is_empty() {
            return Lookup::NotFound;
        }
        if let Some(i) = self.position_of(id_or_prefix) {
            return Lookup::Found(i);
        }
        // Ids are sorted: the matches are one run.
        let from = self
            .skeletons
            .partition_point(|s| s.task_id.as_str() < id_or_prefix);
        let matches: Vec<usize> = (from..self.skeletons.len())
            .take_while(|&i| self.skeletons[i].task_id.starts_with(id_or_prefix))
            .take(6)
            .collect();
        match matches.as_slice() {
            [] => Lookup::NotFound,
            [one] => Lookup::Found(*one),
            many => Lookup::Ambiguous(
                many.iter()
                    .take(5)
                    .map(|&i| self.skeletons[i].task_id.clone())
                    .collect(),
            ),
        }
    }

    /// A task's header by id or unique prefix.
    pub fn get(&self, id_or_prefix: &str) -> std::result::Result<&ConversationSkeleton, Lookup> {
        match self.lookup(id_or_prefix) {
            Lookup::Found(i) => self.skeletons.get(i).ok_or(Lookup::NotFound),
            other => Err(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Headers in id order whose keys tie, go missing, run to the ends of their types and hold
    /// costs of every sign (NaN and -0.0 among them).
    fn headers() -> Vec<ConversationSkeleton> {
        let times = [
            None,
            Some(i64::MIN),
            Some(-1),
            Some(0),
            Some(1_700_000_000_000),
            Some(i64::MAX - 1),
            Some(i64::MAX),
        ];
        let costs = [f64::NAN, -1.5, -0.0, 0.0, 0.25, f64::INFINITY, 3.0];
        let mut seed = 0x9e37_79b9_u64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        (0..400)
            .map(|i| {
                let mut s = ConversationSkeleton {
                    task_id: format!("t{i:04}"),
                    last_activity_ms: times[next(times.len())],
                    created_at_ms: times[next(times.len())],
                    ..ConversationSkeleton::default()
                };
                s.metadata.title = [None, Some("b"), Some("A"), Some("a")][next(4)].map(Into::into);
                s.metadata.message_count = [0, 3, u32::MAX][next(3)];
                s.metadata.action_count = next(3) as u32;
                s.metadata.total_size = [0, 7, u64::MAX][next(3)];
                s.api_totals.total_cost = costs[next(costs.len())];
                s
            })
            .collect()
    }

    #[test]
    fn a_numeric_key_sorts_as_the_comparison_of_every_list() {
        let headers = headers();
        let keys: Vec<ListKey<'_>> = headers.iter().map(ListKey::of).collect();
        for key in SortKey::ALL {
            for ascending in [None, Some(true), Some(false)] {
                let mut expected: Vec<u32> = (0..keys.len() as u32).collect();
                expected
                    .sort_by(|&a, &b| key.order(ascending, &keys[a as usize], &keys[b as usize]));
                let got = sorted_positions(&headers, key, ascending);
                assert_eq!(got, expected, "{key:?} ascending {ascending:?}");
            }
        }
    }

    #[test]
    fn top_flags_find_parents_as_a_search_of_every_id_would() {
        // Ids sharing their first eight bytes, ids shorter than eight, parents of every kind.
        let ids = [
            "01",
            "019d1775",
            "019d1775-a",
            "019d1775-b",
            "019d1775-bb",
            "019d1776",
            "a",
            "ab",
            "t0000000",
            "t0000000x",
        ];
        let parents = [
            None,
            Some(""),
            Some("self"),
            Some("019d1775"),
            Some("019d1775-c"),
            Some("019d1775-bb"),
            Some("019d177"),
            Some("0"),
            Some("ab"),
            Some("t0000000x"),
            Some("t0000000y"),
            Some("zz"),
        ];
        let mut store = TaskStore::empty(&super::super::OpenOptions::default());
        store.skeletons = (ids.iter().enumerate())
            .map(|(i, id)| {
                let parent = parents[(i * 7 + 3) % parents.len()];
                ConversationSkeleton {
                    task_id: (*id).into(),
                    parent_task_id: parent.map(|p| if p == "self" { *id } else { p }.into()),
                    ..ConversationSkeleton::default()
                }
            })
            .collect();
        for round in 0..parents.len() {
            for (i, s) in store.skeletons.iter_mut().enumerate() {
                let parent = parents[(i * 7 + round) % parents.len()];
                s.parent_task_id = parent.map(|p| if p == "self" { ids[i] } else { p }.into());
            }
            let expected: Vec<bool> = (store.skeletons.iter())
                .map(
                    |s| match s.parent_task_id.as_deref().filter(|p| !p.is_empty()) {
                        None => true,
                        Some(p) => p == s.task_id || !ids.contains(&p),
                    },
                )
                .collect();
            assert_eq!(store.top_flags(), expected, "round {round}");
            assert!(expected.contains(&true) && expected.contains(&false));
        }
    }
}
