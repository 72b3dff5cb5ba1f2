// A caller's image rule two folders above its condense module: image blocks become a note when the
// handler's model takes no images.
type Block = { type: string; [key: string]: unknown }
type Message = { role: string; content: string | Block[] }
type Handler = { getModel(): { info: { supportsImages?: boolean } } }

export function maybeRemoveImageBlocks(messages: Message[], apiHandler: Handler): Message[] {
  const images = apiHandler.getModel().info.supportsImages
  return messages.map((m) =>
    Array.isArray(m.content) && !images
      ? { ...m, content: m.content.map((b) => (b.type === 'image' ? { type: 'text', text: '(an image was left out)' } : b)) }
      : { ...m },
  )
}
