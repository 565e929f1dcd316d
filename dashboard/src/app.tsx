/**
 * The dashboard's routes. Public pages (sign-in, setup) stand alone; everything under /dashboard runs
 * inside the signed-in shell. Every page is its own chunk, loaded when first visited; a route's preload
 * (preloads.ts) starts the reads its page shows at the same time, so they do not wait for the chunk. The
 * router also preloads a route when a link to it is hovered.
 */
import { Navigate, Route, Router } from '@solidjs/router'
import { lazy } from 'solid-js'
import {
  preloadActivity,
  preloadBilling,
  preloadGuardrails,
  preloadKeys,
  preloadOverview,
  preloadPlayground,
  preloadPresets,
  preloadRouting,
  preloadSession,
  preloadSupport,
  preloadTeam,
  preloadUsage,
  rereadOnHistory,
} from './preloads.ts'
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
  rereadOnHistory()
  return (
    <>
      <Router>
        <Route path="/" component={() => <Navigate href="/dashboard" />} />
        <Route path="/sign-in" component={SignIn} />
        <Route path="/setup" component={Setup} />
        <Route path="/dashboard" component={Shell} preload={preloadSession}>
          <Route path="/" component={Overview} preload={preloadOverview} />
          <Route path="/keys" component={Keys} preload={preloadKeys} />
          <Route path="/billing" component={Billing} preload={preloadBilling} />
          <Route path="/activity" component={Activity} preload={preloadActivity} />
          <Route path="/usage" component={Usage} preload={preloadUsage} />
          <Route path="/guardrails" component={Guardrails} preload={preloadGuardrails} />
          <Route path="/routing" component={Routing} preload={preloadRouting} />
          <Route path="/presets" component={Presets} preload={preloadPresets} />
          <Route path="/playground" component={Playground} preload={preloadPlayground} />
          <Route path="/support" component={Support} preload={preloadSupport} />
          <Route path="/team" component={Team} preload={preloadTeam} />
          <Route path="*" component={NotFound} />
        </Route>
        <Route path="*" component={NotFound} />
      </Router>
      <Announcer />
    </>
  )
}
