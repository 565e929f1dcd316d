/**
 * The dashboard's routes. Public pages (sign-in, setup) stand alone; everything under /dashboard runs
 * inside the signed-in shell. Every page is its own chunk, loaded when first visited.
 */
import { Navigate, Route, Router } from '@solidjs/router'
import { lazy } from 'solid-js'
import { Shell } from './shell.tsx'
import { Announcer } from './ui.tsx'

const SignIn = lazy(() => import('./pages/sign-in.tsx'))
const Setup = lazy(() => import('./pages/setup.tsx'))
const Overview = lazy(() => import('./pages/overview.tsx'))
const Keys = lazy(() => import('./pages/keys.tsx'))
const Billing = lazy(() => import('./pages/billing.tsx'))
const Activity = lazy(() => import('./pages/activity.tsx'))
const Usage = lazy(() => import('./pages/usage.tsx'))
const Guardrails = lazy(() => import('./pages/guardrails.tsx'))
const Routing = lazy(() => import('./pages/routing.tsx'))
const Presets = lazy(() => import('./pages/presets.tsx'))
const Playground = lazy(() => import('./pages/playground.tsx'))
const Support = lazy(() => import('./pages/support.tsx'))
const Team = lazy(() => import('./pages/team.tsx'))
const NotFound = lazy(() => import('./pages/not-found.tsx'))

export function App() {
  return (
    <>
      <Router>
        <Route path="/" component={() => <Navigate href="/dashboard" />} />
        <Route path="/sign-in" component={SignIn} />
        <Route path="/setup" component={Setup} />
        <Route path="/dashboard" component={Shell}>
          <Route path="/" component={Overview} />
          <Route path="/keys" component={Keys} />
          <Route path="/billing" component={Billing} />
          <Route path="/activity" component={Activity} />
          <Route path="/usage" component={Usage} />
          <Route path="/guardrails" component={Guardrails} />
          <Route path="/routing" component={Routing} />
          <Route path="/presets" component={Presets} />
          <Route path="/playground" component={Playground} />
          <Route path="/support" component={Support} />
          <Route path="/team" component={Team} />
          <Route path="*" component={NotFound} />
        </Route>
        <Route path="*" component={NotFound} />
      </Router>
      <Announcer />
    </>
  )
}
