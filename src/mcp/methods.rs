//! The server as rmcp serves it, between the protocol's methods and [`MemServer`]'s handler:
//! where the answers rmcp would give are made to say more.

use std::borrow::Cow;

use rmcp::Service;
use rmcp::model::{ClientNotification, ClientRequest, ErrorCode, ErrorData, ProtocolVersion};
use rmcp::model::{ServerConfig, ServerResult};
use rmcp::service::{NotificationContext, RequestContext, RoleServer};
use serde_json::json;

use super::MemServer;

/// [`MemServer`] as rmcp serves it: a request for a method it does not have (-32601) is
/// answered with a message that says so and what it has, where rmcp gives the method's name
/// alone.
pub(super) struct Served(pub(super) MemServer);

impl Service<RoleServer> for Served {
    async fn handle_request(
        &self,
        request: ClientRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<ServerResult, ErrorData> {
        let method = request.method().to_string();
        self.0.handle_request(request, context).await.map_err(|mut error| {
            if error.code == ErrorCode::METHOD_NOT_FOUND {
                error.message = format!(
                    "Method not found: mem's MCP server has no method {method:?}; it serves \
                     tools only (initialize, server/discover, ping, tools/list, tools/call)"
                )
                .into();
                error.data.get_or_insert_with(|| json!({ "method": method }));
            }
            error
        })
    }

    async fn handle_notification(
        &self,
        notification: ClientNotification,
        context: NotificationContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.0.handle_notification(notification, context).await
    }

    fn get_info(&self) -> ServerConfig {
        Service::get_info(&self.0)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Service::supported_protocol_versions(&self.0)
    }
}
