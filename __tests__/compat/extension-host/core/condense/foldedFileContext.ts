// A caller's folded-file module beside its condense module: one section per file, the path as its
// heading (the extension renders tree-sitter outlines here).
export async function generateFoldedFileContext(filePaths: string[], options: { cwd: string; rooIgnoreController?: unknown }) {
  const sections = filePaths.map((file) => `<system-reminder>\n## File Context: ${file}\n(outline of ${options.cwd}/${file})\n</system-reminder>`)
  const content = sections.join('\n')
  return { content, sections, filesProcessed: filePaths.length, filesSkipped: 0, characterCount: content.length }
}
