/* Hierarchy types. */

export interface HierarchyResult {
  skeletons: ConversationSkeleton[]
  metrics: HierarchyMetrics
}
