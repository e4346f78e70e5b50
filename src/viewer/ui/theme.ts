/**
 * Light and dark themes: the system's choice (`prefers-color-scheme`) unless
 * the user picked one with the toggle, which is kept in localStorage.
 */

export type Theme = 'light' | 'dark'
/** localStorage key of the picked theme. */
const THEME_KEY = 'mnemo.theme'

/** The theme the user picked, or null to follow the system. */
function storedTheme(): Theme | null {
  try {
    const v = localStorage.getItem(THEME_KEY)
    return v === 'light' || v === 'dark' ? v : null
  } catch {
    return null
  }
}

/** The system's theme. */
function systemTheme(): Theme {
  return matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light'
}

/** The theme in effect. */
export function effectiveTheme(): Theme {
  return storedTheme() ?? systemTheme()
}

/** Applies a theme to the page (`<html data-theme>`, which app.css keys its colours on). */
function applyTheme(theme: Theme): void {
  document.documentElement.dataset['theme'] = theme
}

/** Applies the theme in effect now, and again whenever the system's changes while none is picked. */
export function followTheme(): void {
  applyTheme(effectiveTheme())
  matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
    if (storedTheme() === null) applyTheme(systemTheme())
  })
}

/** Picks `theme`, keeps it, and applies it. */
export function setTheme(theme: Theme): void {
  try {
    localStorage.setItem(THEME_KEY, theme)
  } catch {
    // Not kept: applies to this page only.
  }
  applyTheme(theme)
}
