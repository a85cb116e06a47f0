/**
 * Next.js config. Server-only packages with native or dynamic requires stay external so the
 * route handlers share the same singletons module graph as lib/ (and the worker).
 * @type {import('next').NextConfig}
 */
const nextConfig = {
  serverExternalPackages: ['ioredis', 'amqplib', 'mysql2', 'pino', 'prom-client', '@sesamecare-oss/redlock', 'node-zookeeper-client'],
  poweredByHeader: false,
  reactStrictMode: true,
  // forbidden() → a real 403 status for console pages a consumer (or another merchant) opens.
  experimental: { authInterrupts: true },
};

export default nextConfig;
