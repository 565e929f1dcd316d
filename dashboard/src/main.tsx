/* @refresh reload */
import { render } from 'solid-js/web'
import { App } from './app.tsx'
import './styles.css'

// A page restored from the browser's back-forward cache shows what it held when it was left (another
// account's balance after a sign-out): load it afresh instead.
window.addEventListener('pageshow', (event) => {
  if (event.persisted) location.reload()
})

render(() => <App />, document.getElementById('root')!)
