// The signed-in chat pages, under /chat.
import { Route, Switch } from 'wouter';
import { ChatPage } from './ChatPage';

export default function ChatRoutes() {
  return (
    <Switch>
      <Route path="/">
        <ChatPage />
      </Route>
    </Switch>
  );
}
