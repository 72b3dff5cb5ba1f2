// Another writer of a task's history_item.json, in its own process, as Zoo Code writes it: the
// `proper-lockfile` lock on the file's path, the file read again under the lock, one field of its
// own changed and one child added, the file replaced through a temporary file and a rename.
// usage: node lockfile-peer.mjs <file> <rounds> <field> [<other field>]
// With <other field>, the peer stops halfway until another writer has changed that field, so the
// two writers are known to have interleaved however the machine schedules them.
import fs from 'node:fs/promises'
import lockfile from 'proper-lockfile'

const [file, roundsText, field, otherField] = process.argv.slice(2)
const rounds = Number(roundsText)
const halfway = Math.floor(rounds / 2)

const readRecord = async () => JSON.parse(await fs.readFile(file, 'utf8'))

async function waitForOtherWriter() {
  const seen = (await readRecord())[otherField]
  const deadline = Date.now() + 60_000
  while ((await readRecord())[otherField] === seen) {
    if (Date.now() > deadline) throw new Error(`no other writer changed ${otherField} within 60 s`)
    await new Promise((r) => setTimeout(r, 2))
  }
}
const lockOptions = {
  stale: 31_000,
  update: 10_000,
  realpath: false,
  retries: { retries: 200, factor: 1.1, minTimeout: 2, maxTimeout: 40 },
}

for (let i = 1; i <= rounds; i++) {
  const release = await lockfile.lock(file, lockOptions)
  try {
    const record = await readRecord()
    record[field] = i
    record.childIds = [...(record.childIds ?? []), `${field}-${i}`]
    const tmp = `${file}.${process.pid}.${i}.tmp`
    await fs.writeFile(tmp, JSON.stringify(record))
    await fs.rename(tmp, file)
  } finally {
    await release()
  }
  if (otherField && i === halfway) await waitForOtherWriter()
  // A writer touches the same file now and then, not in a tight loop.
  await new Promise((r) => setTimeout(r, 1))
}
process.stdout.write(`done ${rounds}\n`)
