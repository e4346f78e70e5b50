/**
 * Light and dark themes: the system's choice (`prefers-color-scheme`) unless
 * the user picked one with the toggle, which is kept in localStorage.
 */

export type Theme = 'light' | 'dark'
/** localStorage key of the picked theme. */
export const THEME_KEY = 'mnemo.theme'

/** The theme the user picked, or null to follow the system. */
export function storedTheme(): Theme | null {
  try {
    const v = localStorage.getItem(THEME_KEY)
    return v === 'light' || v === 'dark' ? v : null
  } catch {
    return null
  }
}

/** The system's theme. */
export function systemTheme(): Theme {
  return matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light'
}

/** The theme in effect. */
export function effectiveTheme(): Theme {
  return storedTheme() ?? systemTheme()
}

/** Applies the picked theme (null: follow the system) to the page. */
export function applyTheme(theme: Theme | null): void {
  const root = document.documentElement
  if (theme === null) delete root.dataset['theme']
  else root.dataset['theme'] = theme
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
