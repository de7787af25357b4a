/**
 * A port the service cannot listen on is a configuration problem, not a crash
 * (docs/operations.md, "Ports"): one line that names the port and the variable
 * that sets it, then exit code 2, which `npm start` does not restart.
 */
import net from 'node:net'

/** The operator's line for a failed listen, or undefined for an error that is not about the port. */
export function portRefusal(err: NodeJS.ErrnoException, port: number, variable: string): string | undefined {
  if (err.code === 'EADDRINUSE')
    return `port ${port} is already in use by another program: stop it, or set ${variable} to a free port`
  if (err.code === 'EACCES')
    return `port ${port} needs privileges this process does not have: set ${variable} to a port from 1024 up`
  if (err.code === 'EADDRNOTAVAIL')
    return `port ${port} cannot be opened on this host's addresses: check ${variable} and the host it binds`
  return undefined
}

/** Whether host:port can be listened on now (host undefined: every address, as the web server binds). */
export function canListen(port: number, host?: string): Promise<NodeJS.ErrnoException | undefined> {
  return new Promise((resolve) => {
    const server = net.createServer()
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err))
    server.listen(port, host, () => server.close(() => resolve(undefined)))
  })
}
