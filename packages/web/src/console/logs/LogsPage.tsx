// /logs: the request logs, filtered by what the query string says (a shared
// link shows the same rows), and /logs/<requestId>: one request's detail,
// with the body a failed one sent upstream and its replay.
import { Route, Switch } from 'wouter';
import { Boundary } from '../../ui';
import type { GatewayUser } from '../gateway-api';
import { LogDetail } from './LogDetail';
import { LogList } from './LogList';
import '../console.css';
import './logs.css';

export default function LogsPage({ me }: { me: GatewayUser }) {
  void me; // the admin API decides what an administrator may see
  return (
    <Switch>
      <Route path="/">
        <LogList />
      </Route>
      {/* wouter hands the part decoded (and leaves a malformed one as typed): never "URI malformed". */}
      <Route path="/:requestId">
        {(params) => (
          <Boundary key={params.requestId}>
            <LogDetail requestId={params.requestId} />
          </Boundary>
        )}
      </Route>
    </Switch>
  );
}
