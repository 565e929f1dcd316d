/**
 * Times in filter forms: `<input type="datetime-local">` speaks the browser's local time without a zone,
 * the admin API ISO 8601 UTC. These convert between the two (empty stays empty).
 */

/** "2025-01-31T14:05" (local) → ISO 8601 UTC; '' when empty or not a time. */
export function isoFromLocalInput(value: string): string {
  if (!value) return ''
  const ms = new Date(value).getTime()
  return Number.isFinite(ms) ? new Date(ms).toISOString() : ''
}

/** ISO 8601 → the local "YYYY-MM-DDTHH:mm" a datetime-local input shows; '' when empty. */
export function localInputValue(iso: string | undefined): string {
  if (!iso) return ''
  const date = new Date(iso)
  if (!Number.isFinite(date.getTime())) return ''
  const pad = (value: number) => String(value).padStart(2, '0')
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`
}

/** The browser's time zone as it names it briefly ("UTC", "PST", "GMT+2"): the zone of these inputs. */
export function localZoneName(at = new Date()): string {
  const part = new Intl.DateTimeFormat(undefined, { timeZoneName: 'short' })
    .formatToParts(at)
    .find((entry) => entry.type === 'timeZoneName')
  return part?.value ?? 'local time'
}
