// One forwarded TCP connection per stream (stream-protocol.ts): the agent dials host:port from inside the pod (its
// loopback, or a name of the workspace's network) and carries bytes both ways on channel 0. A failed dial is said on
// channel 1. Either side closing ends the other: the stream's close ends the connection after what was sent, and the
// connection's end closes the stream after what it sent.
import net from 'node:net';
import type { WebSocket } from 'ws';
import { ForwardChannel, frame, parseFrame, portPreamble, sendPaced } from '../core/channel-protocol.ts';
import type { AgentForwardRequest } from './stream-protocol.ts';

export function forwardPort(socket: WebSocket, request: AgentForwardRequest): void {
  for (const opening of portPreamble(request.port)) socket.send(opening);
  const connection = net.connect({ host: request.host, port: request.port });
  connection.on('data', (chunk: Buffer) => sendPaced(socket, frame(ForwardChannel.data, chunk), connection));
  connection.on('error', (error: NodeJS.ErrnoException) => {
    if (socket.readyState !== socket.OPEN) return;
    socket.send(frame(ForwardChannel.error, `${request.host}:${request.port}: ${error.code ?? error.message}`));
    socket.close(1011, 'connection failed');
  });
  connection.on('close', () => {
    if (socket.readyState === socket.OPEN) socket.close(1000);
  });
  socket.on('message', (message: Buffer) => {
    const parsed = parseFrame(message);
    if (parsed?.channel === ForwardChannel.data && parsed.data.length > 0 && connection.writable) connection.write(parsed.data);
  });
  socket.on('close', () => connection.end());
  socket.on('error', () => connection.destroy());
}
