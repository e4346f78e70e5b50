/** The page's one aria-live status message: screens announce outcomes here. */

type Listener = (message: string) => void
const listeners = new Set<Listener>()
let counter = 0

/** Shows `message` in the status region and has screen readers read it. */
export function announce(message: string): void {
  // A repeated message must still be read: alternate a zero-width suffix so the text changes.
  counter++
  const text = counter % 2 === 0 ? message : `${message}\u200b`
  for (const l of listeners) l(text)
}

/** Subscribes to announcements; returns the unsubscribe. */
export function onAnnounce(listener: Listener): () => void {
  listeners.add(listener)
  return () => listeners.delete(listener)
}
