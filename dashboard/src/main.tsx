/* @refresh reload */
import { render } from 'solid-js/web'
import { App } from './app.tsx'
import './styles.css'

render(() => <App />, document.getElementById('root')!)
