/**
 * Shape (b) of the hot server (docs/hot-server.md#shape-a-and-shape-b): nginx as the light front
 * on the one public origin, sending the flash-sale hot routes to a hot-only web server (WEB_PART=hot, Next never
 * loaded) and everything else to Next, as the original 黑马点评 puts nginx in front of Tomcat.
 * Only the bench starts it, to measure (b) beside (a); the product's `npm start` is shape (a).
 */
export function frontConfig(o: { dir: string; port: number; hotPort: number; nextPort: number; workers: number }): string {
  const proxy = (upstream: string) => `proxy_pass http://${upstream};
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $remote_addr;
      proxy_set_header X-Forwarded-Proto $scheme;`;
  return `daemon off;
worker_processes ${o.workers};
pid ${o.dir}/nginx.pid;
error_log ${o.dir}/error.log warn;
# A spike holds one connection per user and one upstream per request in flight; each worker is
# bound by the open-files limit it inherits (e2e/bench: raised to the hard limit).
events { worker_connections 100000; }
http {
  access_log off;
  client_body_temp_path ${o.dir}/body;
  proxy_temp_path ${o.dir}/proxy;
  fastcgi_temp_path ${o.dir}/fastcgi;
  uwsgi_temp_path ${o.dir}/uwsgi;
  scgi_temp_path ${o.dir}/scgi;
  upstream hot { server 127.0.0.1:${o.hotPort}; keepalive 512; }
  upstream next { server 127.0.0.1:${o.nextPort}; keepalive 64; }
  server {
    listen 127.0.0.1:${o.port} backlog=65535${o.workers > 1 ? ' reuseport' : ''};
    # The hot routes of app/api/hot-routes.ts.
    location ~ ^/api/(seckill/[^/]+|seckill/[^/]+/room(?:/challenge|/token)?|orders/[^/]+|shops/[^/]+/vouchers)$ {
      ${proxy('hot')}
    }
    location / {
      ${proxy('next')}
    }
  }
}
`;
}
