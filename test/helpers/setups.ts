/** The combinations of admission store and database the money suites run on, with the services each needs. */
export const storeSetups = [
  { store: 'memory', database: 'postgres', needs: ['postgres'] },
  { store: 'redis', database: 'postgres', needs: ['postgres', 'redis'] },
  { store: 'memory', database: 'embedded', needs: [] },
] as const
