/** Entry point of the viewer bundle (dist/viewer/app.js): applies the theme, takes the token from the address, renders the app. */
import { render } from 'preact'
import { takeTokenFromLocation } from './ui/api.js'
import { App } from './ui/app.js'
import { followTheme } from './ui/theme.js'

followTheme()
takeTokenFromLocation()
const root = document.getElementById('app')
if (root === null) throw new Error('index.html has no #app element')
root.textContent = ''
render(<App />, root)
