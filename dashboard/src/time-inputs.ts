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

/**
 * The browser's time zone as it names it briefly ("UTC", "GMT+9", "PT"), the same all year: a zone with
 * daylight saving time is named without the season ("PT", not "PST"), since a list or a time range holds
 * times of both halves of the year and each is shown in the offset it had then.
 */
export function localZoneName(at = new Date()): string {
  const year = at.getFullYear()
  const seasonal =
    zoneName('short', new Date(year, 0, 1)) !== zoneName('short', new Date(year, 6, 1))
  return zoneName(seasonal ? 'shortGeneric' : 'short', at) ?? 'local time'
}

function zoneName(style: 'short' | 'shortGeneric', at: Date): string | undefined {
  return new Intl.DateTimeFormat(undefined, { timeZoneName: style })
    .formatToParts(at)
    .find((entry) => entry.type === 'timeZoneName')?.value
}
